//! `--sweep 'rolling-window:window=1..8'`: one strategy spec per setting.
//!
//! An option value `a..b` is the inclusive integer range a, a+1, …, b; `x|y|z` lists
//! values. Several swept options give every combination (the first option varies
//! slowest). Other options are passed through unchanged.

use recap_core::{SpecError, StrategySpec};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SweepError {
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error("sweep {sweep:?}: no option has a range (`key=a..b`) or list (`key=x|y`) to sweep")]
    NothingToSweep { sweep: String },
    #[error("sweep {sweep:?}, option {key}: {message}")]
    BadRange {
        sweep: String,
        key: String,
        message: String,
    },
}

/// Upper bound on the settings one sweep may produce (a typo like `1..10000000` should
/// fail fast, not run for days).
pub const MAX_SETTINGS: usize = 1000;

fn values(sweep: &str, key: &str, value: &str) -> Result<Option<Vec<String>>, SweepError> {
    let bad = |message: String| SweepError::BadRange {
        sweep: sweep.to_string(),
        key: key.to_string(),
        message,
    };
    if let Some((a, b)) = value.split_once("..") {
        let parse = |s: &str| {
            s.trim()
                .parse::<i64>()
                .map_err(|_| bad(format!("{s:?} in range {value:?} is not an integer")))
        };
        let (a, b) = (parse(a)?, parse(b.strip_prefix('=').unwrap_or(b))?);
        if a > b {
            return Err(bad(format!("empty range {value:?} (start > end)")));
        }
        if (b - a) as u64 >= MAX_SETTINGS as u64 {
            return Err(bad(format!(
                "range {value:?} has more than {MAX_SETTINGS} values"
            )));
        }
        return Ok(Some((a..=b).map(|v| v.to_string()).collect()));
    }
    if value.contains('|') {
        let list: Vec<String> = value.split('|').map(|v| v.trim().to_string()).collect();
        if list.iter().any(String::is_empty) {
            return Err(bad(format!("empty value in list {value:?}")));
        }
        return Ok(Some(list));
    }
    Ok(None)
}

/// Expands a sweep into concrete spec strings, in order.
pub fn expand(sweep: &str) -> Result<Vec<String>, SweepError> {
    let spec = StrategySpec::parse(sweep)?;
    let mut combos: Vec<StrategySpec> = vec![StrategySpec {
        name: spec.name.clone(),
        options: Default::default(),
    }];
    let mut swept = false;
    for (key, value) in &spec.options {
        let vals = match values(sweep, key, value)? {
            Some(v) => {
                swept = true;
                v
            }
            None => vec![value.clone()],
        };
        combos = combos
            .into_iter()
            .flat_map(|c| {
                vals.iter().map(move |v| {
                    let mut c = c.clone();
                    c.options.insert(key.clone(), v.clone());
                    c
                })
            })
            .collect();
        if combos.len() > MAX_SETTINGS {
            return Err(SweepError::BadRange {
                sweep: sweep.to_string(),
                key: key.clone(),
                message: format!("more than {MAX_SETTINGS} settings in all"),
            });
        }
    }
    if !swept {
        return Err(SweepError::NothingToSweep {
            sweep: sweep.to_string(),
        });
    }
    Ok(combos.iter().map(ToString::to_string).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inclusive_range() {
        let v = expand("rolling-window:window=1..3").unwrap();
        assert_eq!(
            v,
            [
                "rolling-window:window=1",
                "rolling-window:window=2",
                "rolling-window:window=3"
            ]
        );
    }

    #[test]
    fn lists_products_and_fixed_options() {
        let v = expand("rw:window=1|2,println_limit=5,tool_call_limit=1..2").unwrap();
        assert_eq!(v.len(), 4);
        assert_eq!(v[0], "rw:println_limit=5,tool_call_limit=1,window=1");
        assert_eq!(v[3], "rw:println_limit=5,tool_call_limit=2,window=2");
    }

    #[test]
    fn errors_name_the_problem() {
        let e = expand("rolling-window:window=3").unwrap_err().to_string();
        assert!(e.contains("no option has a range"), "{e}");
        let e = expand("rolling-window:window=5..2")
            .unwrap_err()
            .to_string();
        assert!(e.contains("window") && e.contains("start > end"), "{e}");
        let e = expand("rolling-window:window=a..2")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not an integer"), "{e}");
        assert!(expand("x:n=1..100000").is_err());
        assert!(expand("x:n=1||2").is_err());
    }
}
