//! What the evaluation's own tokens cost: a price per million input and output tokens
//! per model, given on the command line (`--price MODEL=IN/OUT`, US dollars). No prices
//! are built in: they change, and local servers cost nothing per token.

use recap_llm::endpoint::Tally;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Price {
    pub model: String,
    /// Dollars per million prompt tokens.
    pub input_per_million: f64,
    /// Dollars per million completion tokens.
    pub output_per_million: f64,
}

impl std::str::FromStr for Price {
    type Err = String;

    /// `MODEL=IN/OUT`, e.g. `gpt-4o-mini=0.15/0.60`.
    fn from_str(s: &str) -> Result<Price, String> {
        let bad = || {
            format!(
                "{s:?}: expected MODEL=IN/OUT (dollars per million tokens), e.g. gpt-4o-mini=0.15/0.60"
            )
        };
        let (model, prices) = s.rsplit_once('=').ok_or_else(bad)?;
        let (input, output) = prices.split_once('/').ok_or_else(bad)?;
        let parse = |x: &str| {
            x.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(bad)
        };
        if model.trim().is_empty() {
            return Err(bad());
        }
        Ok(Price {
            model: model.trim().to_string(),
            input_per_million: parse(input)?,
            output_per_million: parse(output)?,
        })
    }
}

/// What a tally of requests cost at `price`: (all answered requests, those sent in this
/// run).
pub fn cost(price: &Price, t: &Tally) -> (f64, f64) {
    let at = |p: u64, c: u64| {
        (p as f64 * price.input_per_million + c as f64 * price.output_per_million) / 1e6
    };
    (
        at(t.prompt_tokens, t.completion_tokens),
        at(t.sent_prompt_tokens, t.sent_completion_tokens),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_parse_and_price_tallies() {
        let p: Price = "org/model=v1=2.5/10".parse().unwrap();
        assert_eq!(p.model, "org/model=v1");
        assert_eq!((p.input_per_million, p.output_per_million), (2.5, 10.0));
        for bad in ["m", "m=1", "=1/2", "m=a/2", "m=-1/2"] {
            assert!(bad.parse::<Price>().is_err(), "{bad}");
        }
        let t = Tally {
            prompt_tokens: 2_000_000,
            completion_tokens: 100_000,
            sent_prompt_tokens: 1_000_000,
            ..Tally::default()
        };
        assert_eq!(cost(&p, &t), (6.0, 2.5));
    }
}
