//! Tool-call ids as providers and agent frameworks spell them, unique within a session
//! unless the style itself repeats them across responses.

/// How a provider spells tool-call ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IdStyle {
    /// `call_` and 24 letters and digits (OpenAI).
    OpenAi,
    /// `toolu_01` and 22 letters and digits (Anthropic).
    Anthropic,
    /// `call_0`, `call_1`, … over the session (some agent frameworks number calls).
    Numbered,
    /// `call_0`, `call_1`, … restarting at every response, so ids repeat across turns
    /// (some local model servers); only the calls of one response must differ.
    PerResponse,
}

/// A splitmix64 step: ids look random but follow from the session's salt.
pub(crate) fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

pub(crate) const ALNUM: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// `len` pseudo-random letters and digits, then the call's number in base 62, so ids
/// of one session never collide.
pub(crate) fn alnum_id(salt: u64, n: u32, len: usize) -> String {
    let mut out = String::with_capacity(len + 4);
    let mut state = mix(salt ^ u64::from(n).wrapping_mul(0xD6E8_FEB8_6659_FD93));
    for _ in 0..len {
        state = mix(state);
        out.push(ALNUM[(state % 62) as usize] as char);
    }
    let mut rest = n;
    loop {
        out.push(ALNUM[(rest % 62) as usize] as char);
        rest /= 62;
        if rest == 0 {
            break;
        }
    }
    out
}

/// The id of the session's call number `n`, the `in_response`-th of its response.
pub(crate) fn call_id(style: IdStyle, salt: u64, n: u32, in_response: usize) -> String {
    match style {
        IdStyle::OpenAi => format!("call_{}", alnum_id(salt, n, 22)),
        IdStyle::Anthropic => format!("toolu_01{}", alnum_id(salt, n, 20)),
        IdStyle::Numbered => format!("call_{n}"),
        IdStyle::PerResponse => format!("call_{in_response}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_ids_look_like_the_providers_and_repeat_only_where_a_style_does() {
        let ids: Vec<String> = (0..5000)
            .map(|n| call_id(IdStyle::OpenAi, 42, n, 0))
            .collect();
        assert!(
            ids.iter()
                .all(|id| id.starts_with("call_") && id.len() >= 27)
        );
        let mut sorted = ids.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), ids.len());
        assert!(call_id(IdStyle::Anthropic, 1, 0, 0).starts_with("toolu_01"));
        assert_eq!(call_id(IdStyle::Numbered, 1, 7, 2), "call_7");
        assert_eq!(call_id(IdStyle::PerResponse, 1, 7, 2), "call_2");
    }
}
