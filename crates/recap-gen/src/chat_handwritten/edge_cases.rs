//! Runs that exercise one feature each: parallel calls answered out of order, tool
//! errors and recovery, a run without turns, recorded usage, a dialogue without tools.

use super::{schema, string_param};
use crate::chat::{ChatSessionBuilder, ChatTurnBuilder as T};
use serde_json::json;
use serde_json::{Map, Value as Json};

pub(super) fn parallel_calls() -> ChatSessionBuilder {
    ChatSessionBuilder::new("Which of these three cities had the warmest average July in 2023: Lisbon, Athens or Valletta? Give the averages and your sources.")
        .id("parallel-research")
        .system("You are a research assistant. Use web_search and fetch_page; cite every number you report. Prefer primary sources (national weather services).")
        .tool(
            "web_search",
            "Search the web. Returns up to 5 results with title, url and snippet.",
            schema(json!({"query": string_param("The search query.")}), &["query"]),
        )
        .tool(
            "fetch_page",
            "Fetch a page and return its main text.",
            schema(json!({"url": string_param("The URL.")}), &["url"]),
        )
        .meta("source", json!("handwritten"))
        .meta("scenario", json!("parallel tool calls, results recorded out of order"))
        .meta("model", json!("gpt-4.1-mini"))
        .push(
            T::says("I'll search for all three cities at once.")
                .call("call_A1", "web_search", r#"{"query":"Lisbon July 2023 average temperature IPMA climate bulletin"}"#)
                .call("call_A2", "web_search", r#"{"query":"Athens July 2023 mean temperature HNMS monthly bulletin"}"#)
                .call("call_A3", "web_search", r#"{"query":"Valletta Malta July 2023 average temperature Met Office Malta"}"#)
                .result("call_A2", "1. HNMS — Monthly climate bulletin July 2023 — https://example.org/hnms/2023-07\n   \"…mean temperature at Athens (Elliniko) 30.4 °C, 2.1 °C above normal…\"\n2. Heatwave Kleon — news — https://example.org/news/kleon\n   \"…three consecutive heatwaves in July…\"\n")
                .result("call_A1", "1. IPMA — Boletim climatológico julho 2023 — https://example.org/ipma/2023-07\n   \"…temperatura média em Lisboa 24,6 °C…\"\n")
                .result("call_A3", "No results."),
        )
        .push(
            T::says("Valletta found nothing; I'll retry it with a different query and fetch the two bulletins meanwhile.")
                .call("call_B1", "fetch_page", r#"{"url":"https://example.org/ipma/2023-07"}"#)
                .call("call_B2", "fetch_page", r#"{"url":"https://example.org/hnms/2023-07"}"#)
                .call("call_B3", "web_search", r#"{"query":"Malta July 2023 mean air temperature Luqa"}"#)
                .call("call_B4", "web_search", r#"{"query":"Valletta July 2023 temperature record"}"#)
                .result("call_B1", "Boletim Climatológico Mensal — Julho 2023\r\n\r\nTemperatura do ar\r\nLisboa (Geofísico): média 24,6 °C; máxima média 29,8 °C; mínima média 19,4 °C.\r\nAnomalia da média: +1,3 °C em relação a 1981-2010.\r\n")
                .result("call_B2", "Monthly climate bulletin, July 2023\n\nAthens (Elliniko): mean 30.4 °C (normal 28.3 °C); absolute max 41.2 °C on 23 July.\nPrecipitation: 0.0 mm.\n\n")
                .result("call_B3", "1. Malta Meteorological Office — July 2023 summary — https://example.org/mt-met/2023-07\n   \"…mean air temperature at Luqa 29.1 °C, the warmest July on record…\"\n")
                .result("call_B4", "1. Times of Malta — https://example.org/tom/july-heat\n   \"…temperatures peaked at 42.3 °C…\"\n"),
        )
        .push(
            T::silent()
                .call("call_C1", "fetch_page", r#"{"url":"https://example.org/mt-met/2023-07"}"#)
                .result("call_C1", "July 2023 climate summary\n\nMean air temperature (Luqa): 29.1 °C — 2.6 °C above the 1991-2020 normal; warmest July since records began.\n"),
        )
        .push(T::says(
            "Athens was the warmest in July 2023:\n\n\
             | city | July 2023 mean | source |\n|---|---|---|\n\
             | Athens (Elliniko) | 30.4 °C | HNMS monthly bulletin |\n\
             | Valletta (Luqa) | 29.1 °C | Malta Meteorological Office |\n\
             | Lisbon (Geofísico) | 24.6 °C | IPMA boletim climatológico |",
        ))
}

pub(super) fn tool_errors() -> ChatSessionBuilder {
    ChatSessionBuilder::new("Load sales_2024.csv into the reporting database and tell me the total revenue per region.")
        .id("tool-errors-recovery")
        .system("You are a data assistant with a SQL database and a file store. Always check a file's header before loading it.")
        .tool(
            "read_file",
            "Read a text file from the file store.",
            schema(json!({"path": string_param("Path in the store."), "max_lines": {"type": "integer"}}), &["path"]),
        )
        .tool(
            "run_sql",
            "Run one SQL statement; returns rows as CSV or an error.",
            schema(json!({"sql": string_param("The statement.")}), &["sql"]),
        )
        .meta("source", json!("handwritten"))
        .meta("scenario", json!("malformed arguments, wrong paths, a timeout, SQL errors, and recovery"))
        .meta("model", json!("qwen3-coder"))
        .push(
            T::silent()
                .call("call_e1", "read_file", r#"{"path": "sales_2024.csv", "max_lines": 5"#)
                .error("call_e1", "Invalid JSON in arguments: EOF while parsing an object at line 1 column 40")
                .failed(),
        )
        .push(
            T::says("My arguments were cut off; trying again.")
                .call("call_e2", "read_file", r#"{"path": "sales_2024.csv", "max_lines": 5}"#)
                .error("call_e2", "Error: no such file: sales_2024.csv\nDid you mean: exports/sales_2024.csv, exports/sales_2023.csv"),
        )
        .push(
            T::silent()
                .call("call_e3", "read_file", r#"{"path": "exports/sales_2024.csv", "max_lines": 5}"#)
                .result("call_e3", "region;month;revenue_eur\r\nNord;2024-01;12 480,50\r\nSüd;2024-01;9 930,00\r\nOst;2024-01;4 117,25\r\nWest;2024-01;11 002,75\r\n"),
        )
        .push(
            T::says("Semicolon-separated, with decimal commas and spaces as thousands separators. I'll load it as text first.")
                .call("call_e4", "run_sql", r#"{"sql": "CREATE TABLE sales_raw (region TEXT, month TEXT, revenue_eur TEXT)"}"#)
                .call("call_e5", "run_sql", r#"{"sql": "COPY sales_raw FROM 'exports/sales_2024.csv' WITH (FORMAT csv, DELIMITER ';', HEADER true)"}"#)
                .result("call_e4", "CREATE TABLE")
                .error("call_e5", "Tool call timed out after 60 seconds"),
        )
        .push(
            T::silent()
                .call("call_e6", "run_sql", r#"{"sql": "SELECT count(*) FROM sales_raw"}"#)
                .result("call_e6", "count\n48\n"),
        )
        .push(
            T::says("The COPY finished despite the timeout (48 rows = 4 regions × 12 months). Now the totals.")
                .call("call_e7", "run_sql", r#"{"sql": "SELECT region, sum(revenue_eur::numeric) FROM sales_raw GROUP BY region"}"#)
                .error("call_e7", "ERROR:  invalid input syntax for type numeric: \"12 480,50\"\nLINE 1: SELECT region, sum(revenue_eur::numeric) FROM sales_raw GROUP BY region\n                           ^"),
        )
        .push(
            T::silent()
                .call(
                    "call_e8",
                    "run_sql",
                    r#"{"sql": "SELECT region, sum(replace(replace(revenue_eur, ' ', ''), ',', '.')::numeric) AS total FROM sales_raw GROUP BY region ORDER BY total DESC"}"#,
                )
                .result("call_e8", "region,total\nNord,151204.75\nWest,139877.10\nSüd,118650.00\nOst,50311.40\n"),
        )
        .push(T::says(
            "Total revenue per region in 2024 (EUR):\n\n- Nord: 151,204.75\n- West: 139,877.10\n- Süd: 118,650.00\n- Ost: 50,311.40\n\n\
             The file uses `;` and decimal commas, so I loaded it as text and converted when summing.",
        ))
}

pub(super) fn zero_turns() -> ChatSessionBuilder {
    // No budget recorded: the explicit `max_turns: null` is what keeps a session
    // without turns in the chat form when it is read back.
    ChatSessionBuilder::new("Rename the `utils` package to `helpers` and update every import.")
        .id("zero-turns")
        .system("You are a software engineering agent working in /repo.")
        .meta("source", json!("handwritten"))
        .meta(
            "scenario",
            json!("the run ended before the first response (provider overloaded)"),
        )
        .meta(
            "outcome",
            json!("error: 529 overloaded before the first response"),
        )
}

pub(super) fn usage_recorded() -> ChatSessionBuilder {
    let anthropic = |input: u64, cache_read: u64, output: u64| {
        let mut u = Map::new();
        u.insert("input_tokens".into(), Json::from(input));
        u.insert("cache_read_input_tokens".into(), Json::from(cache_read));
        u.insert("output_tokens".into(), Json::from(output));
        u
    };
    ChatSessionBuilder::new("What's the disk usage of each directory under /srv, largest first? Flag anything over 50 GB.")
        .id("usage-recorded")
        .system("You are a sysadmin assistant with shell access. Read-only commands only.")
        .tool("shell", "Run a read-only shell command.", schema(json!({"cmd": string_param("The command.")}), &["cmd"]))
        .meta("source", json!("handwritten"))
        .meta("scenario", json!("provider usage recorded on every turn"))
        .meta(recap_core::session::RECORDED_CONTEXT, json!({"sent": "history"}))

        .meta("model", json!("claude-3-5-haiku"))
        .push(
            T::silent()
                .call("toolu_01Uq3Wx8Kn5Lm2Tb7Rc9Vz4D", "shell", r#"{"cmd":"du -sh /srv/* 2>/dev/null | sort -rh"}"#)
                .result("toolu_01Uq3Wx8Kn5Lm2Tb7Rc9Vz4D", "73G\t/srv/backups\n21G\t/srv/media\n4.2G\t/srv/git\n812M\t/srv/www\n16K\t/srv/lost+found\n")
                .usage_object(anthropic(412, 0, 38)),
        )
        .push(
            T::says("/srv/backups is over 50 GB; let me see what's in it.")
                .call("toolu_01Vr4Xy9Lo6Mn3Uc8Sd0Wa5E", "shell", r#"{"cmd":"du -sh /srv/backups/* | sort -rh | head -n 5"}"#)
                .result("toolu_01Vr4Xy9Lo6Mn3Uc8Sd0Wa5E", "61G\t/srv/backups/db-2023\n9.8G\t/srv/backups/db-2024\n2.1G\t/srv/backups/configs\n")
                .usage_object(anthropic(96, 412, 52)),
        )
        .push(
            T::says(
                "Largest first:\n\n| dir | size |\n|---|---|\n| /srv/backups | 73G ⚠️ over 50 GB (61G of it is db-2023) |\n| /srv/media | 21G |\n| /srv/git | 4.2G |\n| /srv/www | 812M |\n| /srv/lost+found | 16K |",
            )
            .usage_object(anthropic(118, 508, 97)),
        )
}

pub(super) fn plain_usage_dialogue() -> ChatSessionBuilder {
    ChatSessionBuilder::new("Traduis ce message pour mon propriétaire en anglais, ton poli : « Le chauffe-eau fuit depuis hier soir, pouvez-vous envoyer quelqu'un ? »")
        .id("plain-dialogue")
        .system("You are a helpful translator.")
        .max_turns(10)
        .meta("source", json!("handwritten"))
        .meta("scenario", json!("no tools: a plain dialogue with user replies and OpenAI usage"))
        .meta("model", json!("gpt-4o-mini"))
        .push(
            T::says("\"Hello, the water heater has been leaking since last night. Could you please send someone to take a look?\"")
                .user("un peu plus formel stp, et ajoute que je suis là toute la journée demain")
                .usage(61, 27),
        )
        .push(
            T::says("\"Dear Mr. Alvarez,\n\nI am writing to let you know that the water heater has been leaking since yesterday evening. Would it be possible to send someone to repair it? I will be at home all day tomorrow.\n\nKind regards,\"")
                .user("parfait merci")
                .usage(131, 58),
        )
        .push(T::says("Avec plaisir ! N'oubliez pas d'ajouter votre nom et votre numéro d'appartement à la fin.").usage(206, 23))
}
