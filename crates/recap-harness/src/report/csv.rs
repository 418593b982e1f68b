//! The CSV view: one row per run, every column of [`super::columns::COLUMNS`] with its
//! raw value.

use super::Report;
use super::columns::COLUMNS;

pub(crate) fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

pub fn to_csv(report: &Report) -> String {
    let header: Vec<&str> = COLUMNS.iter().map(|c| c.name).collect();
    let mut out = header.join(",");
    out.push('\n');
    for r in &report.runs {
        let row: Vec<String> = COLUMNS.iter().map(|c| field(&(c.raw)(r))).collect();
        out.push_str(&row.join(","));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::field;

    #[test]
    fn fields_with_separators_are_quoted() {
        assert_eq!(field("rolling-window:window=2"), "rolling-window:window=2");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("0.8057813902871653"), "0.8057813902871653");
    }
}
