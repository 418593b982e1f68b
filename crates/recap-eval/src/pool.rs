//! A fixed number of threads working through a list, stopping early when told to.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `f` applied to every item on `threads` threads; an item not started because `stop`
/// said so is `None`. Results come back in item order.
pub fn run<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    stop: impl Fn() -> bool + Sync,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<Option<R>> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads.clamp(1, items.len().max(1)) {
            s.spawn(|| {
                loop {
                    if stop() {
                        return;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { return };
                    let r = f(item);
                    results.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(r);
                }
            });
        }
    });
    results.into_inner().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    #[test]
    fn results_keep_item_order_and_stop_stops() {
        let items: Vec<u32> = (0..50).collect();
        let out = super::run(&items, 4, || false, |x| x * 2);
        assert_eq!(out, items.iter().map(|x| Some(x * 2)).collect::<Vec<_>>());
        let none = super::run(&items, 4, || true, |x| x * 2);
        assert!(none.iter().all(Option::is_none));
    }
}
