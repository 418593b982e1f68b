//! Coding-agent runs: a function-calling repair, a classic fenced-command run whose
//! observations are environment USER messages, an OpenHands-like run and a
//! Claude-Code-like run with reasoning.

use super::{schema, string_param};
use crate::chat::{ChatSessionBuilder, ChatTurnBuilder as T};
use serde_json::json;

const PARSER_PY: &str = "   38\t\n   39\tdef parse_header(line):\n   40\t    \"\"\"Split one `Name: value` header line.\"\"\"\n   41\t    name, _, rest = line.partition(\":\")\n   42\t    parts = rest.split()\n   43\t    headers[name.strip()] = parts[0]\n   44\t    return headers\n   45\t\n";

pub(super) fn swe_function_calling() -> ChatSessionBuilder {
    ChatSessionBuilder::new(
        "<uploaded_files>\n/repo\n</uploaded_files>\nI've uploaded a python code repository in the directory /repo. Consider the following issue:\n\n\
         <issue>\nparse_header() crashes on a header with an empty value\n\n\
         ```python\n>>> from tinyhttp.headers import parse_header\n>>> parse_header(\"X-Trace:\")\nIndexError: list index out of range\n```\n\
         Expected: {\"X-Trace\": \"\"}\n</issue>\n\n\
         Can you help me implement the necessary changes to the repository so that the requirements specified in the issue are met?",
    )
    .id("swe-function-calling")
    .system("You are a helpful assistant that can interact with a computer to solve tasks.")
    .max_turns(50)
    .tool(
        "bash",
        "runs the given command directly in bash",
        schema(json!({"command": string_param("The bash command to execute.")}), &["command"]),
    )
    .tool(
        "str_replace_editor",
        "Custom editing tool for viewing, creating and editing files.",
        schema(
            json!({
                "command": {"type": "string", "enum": ["view", "create", "str_replace", "insert", "undo_edit"]},
                "path": string_param("Absolute path to file or directory."),
                "old_str": string_param("Required for str_replace."),
                "new_str": string_param("Replacement for str_replace."),
                "view_range": {"type": "array", "items": {"type": "integer"}}
            }),
            &["command", "path"],
        ),
    )
    .tool("submit", "submits the current file", schema(json!({}), &[]))
    .meta("source", json!("handwritten"))
    .meta("scenario", json!("SWE-agent function-calling repair"))
    .meta("model", json!("gpt-4.1"))
    .meta("outcome", json!("submitted"))
    .push(
        T::says("Let me find the header parser.")
            .call("call_8mW2qLx0Tz4Rb7Nc1Yv5KsPd", "bash", r#"{"command":"grep -rn \"def parse_header\" /repo"}"#)
            .result("call_8mW2qLx0Tz4Rb7Nc1Yv5KsPd", "/repo/tinyhttp/headers.py:39:def parse_header(line):\n"),
    )
    .push(
        T::silent()
            .call("call_Rk5Vn9Qw2Hx7Lc0Bt3Zm8YsA", "str_replace_editor", r#"{"command":"view","path":"/repo/tinyhttp/headers.py","view_range":[38,45]}"#)
            .result("call_Rk5Vn9Qw2Hx7Lc0Bt3Zm8YsA", &format!("Here's the result of running `cat -n` on /repo/tinyhttp/headers.py:\n{PARSER_PY}")),
    )
    .push(
        T::says("`parts[0]` fails when nothing follows the colon. I'll reproduce it first.")
            .call(
                "call_Cw4Jt8Mb1Xq6Pn9Ld2Vr7KhZ",
                "bash",
                r#"{"command":"cd /repo && python -c 'from tinyhttp.headers import parse_header; print(parse_header(\"X-Trace:\"))'"}"#,
            )
            .error(
                "call_Cw4Jt8Mb1Xq6Pn9Ld2Vr7KhZ",
                "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n  File \"/repo/tinyhttp/headers.py\", line 43, in parse_header\n    headers[name.strip()] = parts[0]\n                            ~~~~~^^^\nIndexError: list index out of range\n",
            ),
    )
    .push(
        T::silent()
            .call(
                "call_Gs1Xd6Nq3Wb8Tk0Mz5Hv2RcL",
                "str_replace_editor",
                r#"{"command":"str_replace","path":"/repo/tinyhttp/headers.py","old_str":"    parts = rest.split()\n    headers[name.strip()] = parts[0]","new_str":"    headers[name.strip()] = rest.strip()"}"#,
            )
            .result(
                "call_Gs1Xd6Nq3Wb8Tk0Mz5Hv2RcL",
                "The file /repo/tinyhttp/headers.py has been edited. Here's the result of running `cat -n` on a snippet of /repo/tinyhttp/headers.py:\n    39\tdef parse_header(line):\n    40\t    \"\"\"Split one `Name: value` header line.\"\"\"\n    41\t    name, _, rest = line.partition(\":\")\n    42\t    headers[name.strip()] = rest.strip()\n    43\t    return headers\nReview the changes and make sure they are as expected. Edit the file again if necessary.",
            ),
    )
    .push(
        T::says("The old code also kept only the first word of a value with spaces; `rest.strip()` keeps it whole. Now the tests.")
            .call("call_Tn7Ke2Wq9Lz4Xb1Vm6Rc3HdS", "bash", r#"{"command":"cd /repo && python -m pytest -q tests/test_headers.py 2>&1 | tail -n 5"}"#)
            .result("call_Tn7Ke2Wq9Lz4Xb1Vm6Rc3HdS", "..........                                                               [100%]\n10 passed in 0.07s\n"),
    )
    .push(
        T::silent()
            .call("call_Pb3Wz8Rn5Mq0Kv7Xd2Lt9JcY", "submit", "{}")
            .result(
                "call_Pb3Wz8Rn5Mq0Kv7Xd2Lt9JcY",
                "diff --git a/tinyhttp/headers.py b/tinyhttp/headers.py\n--- a/tinyhttp/headers.py\n+++ b/tinyhttp/headers.py\n@@ -40,6 +40,5 @@ def parse_header(line):\n     name, _, rest = line.partition(\":\")\n-    parts = rest.split()\n-    headers[name.strip()] = parts[0]\n+    headers[name.strip()] = rest.strip()\n     return headers\n",
            ),
    )
}

const FOOTER: &str = "(Open file: /repo/src/units.py)\n(Current directory: /repo)\nbash-$";

pub(super) fn swe_classic() -> ChatSessionBuilder {
    ChatSessionBuilder::new(
        "We're currently solving the following issue within our repository. Here's the issue text:\n\
         ISSUE:\nconvert(1, \"km\", \"mi\") returns 1.609 instead of 0.621\n\n\
         INSTRUCTIONS:\nNow, you're going to solve this issue on your own. Edit all the files you need to and run any checks or tests that you want. \
         When you're satisfied with all of the changes you've made, you can submit your changes to the code base by simply running the submit command.\n\
         (Open file: n/a)\n(Current directory: /repo)\nbash-$",
    )
    .id("swe-classic-fenced")
    .system(
        "SETTING: You are an autonomous programmer, and you're working directly in the command line with a special interface.\n\n\
         COMMANDS:\nopen <path> [<line_number>] - opens the file at the given path in the editor\n\
         goto <line_number> - moves the window to show <line_number>\n\
         edit <start_line>:<end_line>\n<replacement_text>\nend_of_edit - replaces lines start_line through end_line\n\
         search_file <search_term> [<file>] - searches for search_term in file\n\
         submit - submits your current code and terminates the session\n\n\
         RESPONSE FORMAT:\nYour shell prompt is formatted as follows:\n(Open file: <path>) <cwd> $\n\n\
         You need to format your output using two fields; discussion and command.\n\
         Your output should always include _one_ discussion and _one_ command field EXACTLY as in the following example:\n\
         DISCUSSION\nFirst I'll start by using ls to see what files are in the current directory.\n```\nls -a\n```",
    )
    .max_turns(30)
    .meta("source", json!("handwritten"))
    .meta("scenario", json!("classic SWE-agent: fenced commands, environment output as user messages"))
    .meta("model", json!("gpt-4-0125-preview"))
    .push(
        T::says("DISCUSSION\nLet me reproduce the bug first.\n```\ncreate reproduce.py\n```")
            .env("[File: /repo/reproduce.py (1 lines total)]\n1:\n(Open file: /repo/reproduce.py)\n(Current directory: /repo)\nbash-$"),
    )
    .push(
        T::says("DISCUSSION\nNow the reproduction code.\n```\nedit 1:1\nfrom units import convert\nprint(convert(1, \"km\", \"mi\"))\nend_of_edit\n```")
            .env("[File: /repo/reproduce.py (2 lines total)]\n1:from units import convert\n2:print(convert(1, \"km\", \"mi\"))\nFile updated. Please review the changes and make sure they are correct (correct indentation, no duplicate lines, etc). Edit the file again if necessary.\n(Open file: /repo/reproduce.py)\n(Current directory: /repo)\nbash-$"),
    )
    .push(
        T::says("DISCUSSION\n```\npython reproduce.py\n```")
            .env("1.609344\n(Open file: /repo/reproduce.py)\n(Current directory: /repo)\nbash-$"),
    )
    .push(
        T::says("DISCUSSION\nReproduced. Let's look at convert.\n```\nsearch_file \"def convert\" src/units.py\n```")
            .env("Found 1 matches for \"def convert\" in /repo/src/units.py:\nLine 18:def convert(value, src, dst):\nEnd of matches for \"def convert\" in /repo/src/units.py\n(Open file: /repo/reproduce.py)\n(Current directory: /repo)\nbash-$"),
    )
    .push(
        T::says("DISCUSSION\n```\nopen src/units.py 18\n```")
            .env(&format!(
                "[File: /repo/src/units.py (31 lines total)]\n(8 more lines above)\n9:FACTORS = {{\n10:    (\"km\", \"mi\"): 1.609344,\n11:    (\"mi\", \"km\"): 0.621371,\n12:    (\"kg\", \"lb\"): 2.204623,\n13:    (\"lb\", \"kg\"): 0.453592,\n14:}}\n15:\n16:\n17:\n18:def convert(value, src, dst):\n19:    \"\"\"Convert value from unit src to unit dst.\"\"\"\n20:    if src == dst:\n21:        return value\n22:    return value * FACTORS[(src, dst)]\n(9 more lines below)\n{FOOTER}"
            )),
    )
    .push(
        T::says("DISCUSSION\nThe two distance factors are swapped. Fixing lines 10-11.\n```\nedit 10:11\n    (\"km\", \"mi\"): 0.621371,\n    (\"mi\", \"km\"): 1.609344,\nedit_end\n```")
            .env(&format!("Error: the edit command needs `end_of_edit` on its own line.\n{FOOTER}"))
            .failed(),
    )
    .push(
        T::says("DISCUSSION\nI used the wrong terminator. Again:\n```\nedit 10:11\n    (\"km\", \"mi\"): 0.621371,\n    (\"mi\", \"km\"): 1.609344,\nend_of_edit\n```")
            .env(&format!("[File: /repo/src/units.py (31 lines total)]\n(8 more lines above)\n9:FACTORS = {{\n10:    (\"km\", \"mi\"): 0.621371,\n11:    (\"mi\", \"km\"): 1.609344,\n12:    (\"kg\", \"lb\"): 2.204623,\n(19 more lines below)\nFile updated. Please review the changes and make sure they are correct (correct indentation, no duplicate lines, etc). Edit the file again if necessary.\n{FOOTER}")),
    )
    .push(
        T::says("DISCUSSION\n```\npython reproduce.py && rm reproduce.py\n```")
            .env(&format!("0.621371\n{FOOTER}")),
    )
    .push(
        T::says("DISCUSSION\nThe output is now correct and the script is removed.\n```\nsubmit\n```")
            .env("\ndiff --git a/src/units.py b/src/units.py\nindex 3b0c1e2..9f7a4d1 100644\n--- a/src/units.py\n+++ b/src/units.py\n@@ -7,8 +7,8 @@\n FACTORS = {\n-    (\"km\", \"mi\"): 1.609344,\n-    (\"mi\", \"km\"): 0.621371,\n+    (\"km\", \"mi\"): 0.621371,\n+    (\"mi\", \"km\"): 1.609344,\n"),
    )
}

pub(super) fn openhands() -> ChatSessionBuilder {
    ChatSessionBuilder::new("Add a `--json` flag to `todo list` that prints the items as a JSON array. Keep the default output unchanged.")
        .id("openhands-run")
        .system("You are OpenHands agent, a helpful AI assistant that can interact with a computer to solve tasks.\n<IMPORTANT>\n* If user provides a path, you should NOT assume it's relative to the current working directory.\n* When configuring git credentials, use \"openhands\" as the user.name.\n</IMPORTANT>")
        .tool(
            "execute_bash",
            "Execute a bash command in the terminal within a persistent shell session.",
            schema(
                json!({
                    "command": string_param("The bash command to execute."),
                    "is_input": {"type": "string", "enum": ["true", "false"]}
                }),
                &["command"],
            ),
        )
        .tool(
            "str_replace_editor",
            "Custom editing tool for viewing, creating and editing files in plain-text format.",
            schema(
                json!({
                    "command": {"type": "string", "enum": ["view", "create", "str_replace", "insert", "undo_edit"]},
                    "path": string_param("Absolute path to file or directory, e.g. `/workspace/file.py`."),
                    "old_str": string_param("The string to replace."),
                    "new_str": string_param("The new string.")
                }),
                &["command", "path"],
            ),
        )
        .tool("think", "Log a thought; it changes nothing.", schema(json!({"thought": string_param("The thought.")}), &["thought"]))
        .tool("finish", "Finish the interaction.", schema(json!({"message": string_param("Final message to the user.")}), &["message"]))
        .meta("source", json!("handwritten"))
        .meta("scenario", json!("OpenHands-style CodeAct run"))
        .meta("model", json!("claude-3-7-sonnet"))
        .push(
            T::says("I'll start by exploring the repository.")
                .call("toolu_01GvX7cN2qM9rT4wK8pL1zYb", "execute_bash", r#"{"command": "cd /workspace/todo && ls -R src | head -n 40"}"#)
                .result(
                    "toolu_01GvX7cN2qM9rT4wK8pL1zYb",
                    "src:\ntodo\n\nsrc/todo:\n__init__.py\ncli.py\nstore.py\n[The command completed with exit code 0.]\n[Current working directory: /workspace/todo]\n[Python interpreter: /usr/bin/python]\n[Command finished with exit code 0]",
                ),
        )
        .push(
            T::silent()
                .call("toolu_01Bw3kR8nV5xQ0sJ2mH7tLcD", "str_replace_editor", r#"{"command": "view", "path": "/workspace/todo/src/todo/cli.py"}"#)
                .result(
                    "toolu_01Bw3kR8nV5xQ0sJ2mH7tLcD",
                    "Here's the result of running `cat -n` on /workspace/todo/src/todo/cli.py:\n     1\timport argparse\n     2\t\n     3\tfrom .store import load_items\n     4\t\n     5\t\n     6\tdef cmd_list(args):\n     7\t    for i, item in enumerate(load_items(), 1):\n     8\t        mark = \"x\" if item.done else \" \"\n     9\t        print(f\"{i:>3}. [{mark}] {item.title}\")\n    10\t\n    11\t\n    12\tdef main(argv=None):\n    13\t    parser = argparse.ArgumentParser(prog=\"todo\")\n    14\t    sub = parser.add_subparsers(dest=\"cmd\", required=True)\n    15\t    p_list = sub.add_parser(\"list\")\n    16\t    p_list.set_defaults(func=cmd_list)\n    17\t    args = parser.parse_args(argv)\n    18\t    args.func(args)\n",
                ),
        )
        .push(
            T::silent()
                .call("toolu_01Ty6pF1cZ9wN4bX7qR2kM5s", "think", r#"{"thought": "Items have title and done. json.dumps a list of dicts in cmd_list when args.json; default path unchanged. ensure_ascii=False so titles with accents stay readable."}"#)
                .result("toolu_01Ty6pF1cZ9wN4bX7qR2kM5s", "Your thought has been logged."),
        )
        .push(
            T::silent()
                .call(
                    "toolu_01Mz4hQ9wB2vK7cT0xN5rJ8e",
                    "str_replace_editor",
                    r#"{"command": "str_replace", "path": "/workspace/todo/src/todo/cli.py", "old_str": "def cmd_list(args):\n    for i, item", "new_str": "def cmd_list(args):\n    if args.json:\n        items = [{\"title\": it.title, \"done\": it.done} for it in load_items()]\n        print(json.dumps(items, ensure_ascii=False))\n        return\n    for i, item"}"#,
                )
                .result("toolu_01Mz4hQ9wB2vK7cT0xN5rJ8e", "The file /workspace/todo/src/todo/cli.py has been edited. Review the changes and make sure they are as expected."),
        )
        .push(
            T::silent()
                .call(
                    "toolu_01Kp8sW3nD6xR1vB9mQ4tZ7c",
                    "str_replace_editor",
                    r#"{"command": "str_replace", "path": "/workspace/todo/src/todo/cli.py", "old_str": "import argparse\n", "new_str": "import argparse\nimport json\n"}"#,
                )
                .result("toolu_01Kp8sW3nD6xR1vB9mQ4tZ7c", "The file /workspace/todo/src/todo/cli.py has been edited. Review the changes and make sure they are as expected."),
        )
        .push(
            T::silent()
                .call(
                    "toolu_01Rc2xV7kM0pT5wN8bJ3qL6h",
                    "str_replace_editor",
                    r#"{"command": "str_replace", "path": "/workspace/todo/src/todo/cli.py", "old_str": "    p_list.set_defaults(func=cmd_list)", "new_str": "    p_list.add_argument(\"--json\", action=\"store_true\", help=\"print items as a JSON array\")\n    p_list.set_defaults(func=cmd_list)"}"#,
                )
                .result("toolu_01Rc2xV7kM0pT5wN8bJ3qL6h", "The file /workspace/todo/src/todo/cli.py has been edited. Review the changes and make sure they are as expected."),
        )
        .push(
            T::says("Let me try both outputs.")
                .call("toolu_01Dn9wK4tB7xM2cV5qR0pJ8s", "execute_bash", r#"{"command": "cd /workspace/todo && python -m todo list && python -m todo list --json"}"#)
                .result(
                    "toolu_01Dn9wK4tB7xM2cV5qR0pJ8s",
                    "  1. [x] Buy milk\n  2. [ ] Réserver le train\n  3. [ ] 買い物リストを書く\n[{\"title\": \"Buy milk\", \"done\": true}, {\"title\": \"Réserver le train\", \"done\": false}, {\"title\": \"買い物リストを書く\", \"done\": false}]\n[The command completed with exit code 0.]\n[Current working directory: /workspace/todo]\n[Python interpreter: /usr/bin/python]\n[Command finished with exit code 0]",
                ),
        )
        .push(
            T::says("Both outputs look right: the default listing is unchanged and --json prints an array.")
                .env("[auto-reply] Nobody is watching this run live. Keep working until the task is complete, then call `finish`."),
        )
        .push(
            T::silent()
                .call(
                    "toolu_01Wq5bN8xT1kV4mC7rJ0zP3d",
                    "str_replace_editor",
                    r#"{"command": "create", "path": "/workspace/todo/tests/test_cli_json.py", "file_text": "import json\n\nfrom todo.cli import main\n\n\ndef test_list_json(capsys, tmp_store):\n    main([\"list\", \"--json\"])\n    items = json.loads(capsys.readouterr().out)\n    assert items[0] == {\"title\": \"Buy milk\", \"done\": True}\n"}"#,
                )
                .result("toolu_01Wq5bN8xT1kV4mC7rJ0zP3d", "File created successfully at: /workspace/todo/tests/test_cli_json.py"),
        )
        .push(
            T::silent()
                .call("toolu_01Jx3mT6wB9kN2vR5cQ8pZ1f", "execute_bash", r#"{"command": "cd /workspace/todo && python -m pytest -q"}"#)
                .result(
                    "toolu_01Jx3mT6wB9kN2vR5cQ8pZ1f",
                    "......                                                                   [100%]\n6 passed in 0.21s\n[The command completed with exit code 0.]\n[Current working directory: /workspace/todo]\n[Python interpreter: /usr/bin/python]\n[Command finished with exit code 0]",
                ),
        )
        .push(
            T::silent()
                .call("toolu_01Hb7nW0xK3tV6mR9cJ2qP5g", "finish", r#"{"message": "Added `todo list --json` (JSON array of {title, done}, non-ASCII kept) and a test; the default output is unchanged. All 6 tests pass."}"#)
                .result("toolu_01Hb7nW0xK3tV6mR9cJ2qP5g", ""),
        )
}

pub(super) fn claude_code() -> ChatSessionBuilder {
    ChatSessionBuilder::new("the `stats` command prints NaN for empty groups, make it print 0 instead and update the snapshot tests")
        .id("claude-code-thinking")
        .system("You are an interactive CLI tool that helps users with software engineering tasks. Use the instructions below and the tools available to you to assist the user.\n\n# Tone and style\nYou should be concise, direct, and to the point.")
        .tool("Read", "Reads a file from the local filesystem.", schema(json!({"file_path": string_param("The absolute path to the file to read.")}), &["file_path"]))
        .tool("Grep", "A powerful search tool built on ripgrep.", schema(json!({"pattern": string_param("The regular expression pattern."), "path": string_param("File or directory to search in.")}), &["pattern"]))
        .tool("Edit", "Performs exact string replacements in files.", schema(json!({"file_path": string_param("The absolute path."), "old_string": string_param("The text to replace."), "new_string": string_param("The replacement.")}), &["file_path", "old_string", "new_string"]))
        .tool("Bash", "Executes a given bash command.", schema(json!({"command": string_param("The command to execute."), "description": string_param("What it does, in 5-10 words.")}), &["command"]))
        .meta("source", json!("handwritten"))
        .meta("scenario", json!("Claude-Code-style run with thinking"))
        .meta(recap_core::session::RECORDED_CONTEXT, json!({"sent": "history"}))

        .meta("model", json!("claude-sonnet-4"))
        .push(
            T::silent()
                .reasoning("NaN for empty groups means a mean computed as sum/len with len 0 in floating point. Find the stats command.")
                .call("toolu_01Aq9Xv2Lm7Kp4Tn1Rb8Wc3Z", "Grep", r#"{"pattern":"fn (mean|average)","path":"/home/dev/tally/src"}"#)
                .call("toolu_01Bz6Nc3Qw8Jr5Vm2Xd9Kt4Y", "Grep", r#"{"pattern":"NaN","path":"/home/dev/tally/tests/snapshots"}"#)
                .result("toolu_01Aq9Xv2Lm7Kp4Tn1Rb8Wc3Z", "/home/dev/tally/src/stats.rs:41:fn mean(values: &[f64]) -> f64 {")
                .result("toolu_01Bz6Nc3Qw8Jr5Vm2Xd9Kt4Y", "/home/dev/tally/tests/snapshots/cli__stats_empty_group.snap:7:│ tea    │     0 │   NaN │\n/home/dev/tally/tests/snapshots/cli__stats_mixed.snap:12:│ other  │     0 │   NaN │"),
        )
        .push(
            T::silent()
                .reasoning("Read the function.")
                .call("toolu_01Cx4Mv7Ry1Kq8Wn5Tb2Lp9S", "Read", r#"{"file_path":"/home/dev/tally/src/stats.rs"}"#)
                .result(
                    "toolu_01Cx4Mv7Ry1Kq8Wn5Tb2Lp9S",
                    "    38\t/// The arithmetic mean.\r\n    39\t///\r\n    40\t/// Callers pass the values of one group.\r\n    41\tfn mean(values: &[f64]) -> f64 {\r\n    42\t    values.iter().sum::<f64>() / values.len() as f64\r\n    43\t}\r\n",
                ),
        )
        .push(
            T::says("The file uses CRLF line endings; I'll keep them.")
                .reasoning("Edit must match \\r\\n exactly. Old string: the division line only, which is unique.")
                .call(
                    "toolu_01Dw1Kv6Tn3Xq9Mb4Rc7Lz2P",
                    "Edit",
                    r#"{"file_path":"/home/dev/tally/src/stats.rs","old_string":"    values.iter().sum::<f64>() / values.len() as f64","new_string":"    if values.is_empty() {\r\n        return 0.0;\r\n    }\r\n    values.iter().sum::<f64>() / values.len() as f64"}"#,
                )
                .result("toolu_01Dw1Kv6Tn3Xq9Mb4Rc7Lz2P", "The file /home/dev/tally/src/stats.rs has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\r\n    41\tfn mean(values: &[f64]) -> f64 {\r\n    42\t    if values.is_empty() {\r\n    43\t        return 0.0;\r\n    44\t    }\r\n    45\t    values.iter().sum::<f64>() / values.len() as f64\r\n    46\t}"),
        )
        .push(
            T::silent()
                .reasoning("Now update snapshots. cargo insta test --accept would accept everything; safer to review: run tests first and look at the diff.")
                .call("toolu_01Ev8Lx3Wq6Kn1Tc9Mb5Rz4V", "Bash", r#"{"command":"cd /home/dev/tally && cargo insta test 2>&1 | tail -n 25","description":"Run snapshot tests"}"#)
                .result(
                    "toolu_01Ev8Lx3Wq6Kn1Tc9Mb5Rz4V",
                    "   Compiling tally v0.4.2 (/home/dev/tally)\n    Finished `test` profile [unoptimized + debuginfo] target(s) in 4.81s\n     Running tests/cli.rs (target/debug/deps/cli-5e1f0c2a7d9b3e44)\n\nrunning 9 tests\ntest stats_basic ... ok\ntest stats_empty_group ... FAILED\ntest stats_mixed ... FAILED\n\n━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━\nSnapshot: stats_empty_group\n-old snapshot\n+new results\n────────────┬───────────────────────────────────────\n    7     7 │ │ tea    │     0 │\n    7       │-  NaN │\n          7 │+    0 │\n────────────┴───────────────────────────────────────\ninfo: 2 snapshots to review\n",
                ),
        )
        .push(
            T::says("Only the two expected snapshots changed (NaN → 0). Accepting them.")
                .reasoning("The diff is exactly the intended change.")
                .call("toolu_01Fy2Mw9Kx5Tq8Lb3Rn6Vc1Z", "Bash", r#"{"command":"cd /home/dev/tally && cargo insta accept && cargo test -q 2>&1 | tail -n 3","description":"Accept snapshots and rerun tests"}"#)
                .result("toolu_01Fy2Mw9Kx5Tq8Lb3Rn6Vc1Z", "info: accepted 2 snapshots\n\nrunning 9 tests\n.........\ntest result: ok. 9 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.41s\n\n"),
        )
        .push(
            T::says("Done: `mean` returns 0 for an empty group (src/stats.rs:41), and the two snapshots (`stats_empty_group`, `stats_mixed`) now show 0. All 9 tests pass.")
                .reasoning("Summarise in two lines.")
                .user("nice, thanks"),
        )
}

/// A Claude-Code-style run that compacts its own history halfway, as the `claude-code`
/// importer writes such a transcript: the summary is a USER observation of the turn
/// before it, and `meta.recorded_context` says where the agent started over.
pub(super) fn claude_code_compacted() -> ChatSessionBuilder {
    ChatSessionBuilder::new("the nightly export job writes the CSV with a trailing comma on every row; find out why and fix it, then make sure the importer still reads old files")
        .id("claude-code-compacted")
        .system("You are an interactive CLI tool that helps users with software engineering tasks. Use the instructions below and the tools available to you to assist the user.\n\n# Tone and style\nYou should be concise, direct, and to the point.")
        .tool("Read", "Reads a file from the local filesystem.", schema(json!({"file_path": string_param("The absolute path to the file to read.")}), &["file_path"]))
        .tool("Edit", "Performs exact string replacements in files.", schema(json!({"file_path": string_param("The absolute path."), "old_string": string_param("The text to replace."), "new_string": string_param("The replacement.")}), &["file_path", "old_string", "new_string"]))
        .tool("Bash", "Executes a given bash command.", schema(json!({"command": string_param("The command to execute."), "description": string_param("What it does, in 5-10 words.")}), &["command"]))
        .meta("source", json!("handwritten"))
        .meta("scenario", json!("Claude-Code-style run that compacts its own history"))
        .meta("model", json!("claude-sonnet-4"))
        .meta("compactions", json!([2]))
        .meta(
            recap_core::session::RECORDED_CONTEXT,
            json!({"sent": "history", "restarts": [{"after_turns": 2, "observation": 1}]}),
        )
        .push(
            T::silent()
                .reasoning("A trailing comma on every row: the writer joins fields with a separator after each field instead of between them.")
                .call("toolu_01Ga3Nx7Rk2Wq5Tm8Lc1Vb4Z", "Read", r#"{"file_path":"/home/dev/ledger/export/csv_writer.py"}"#)
                .result(
                    "toolu_01Ga3Nx7Rk2Wq5Tm8Lc1Vb4Z",
                    "     1\timport io\n     2\t\n     3\tCOLUMNS = [\"date\", \"account\", \"amount\", \"currency\", \"memo\"]\n     4\t\n     5\t\n     6\tdef write_rows(rows, out):\n     7\t    out.write(\",\".join(COLUMNS) + \"\\n\")\n     8\t    for row in rows:\n     9\t        line = \"\"\n    10\t        for col in COLUMNS:\n    11\t            line += quote(row.get(col, \"\")) + \",\"\n    12\t        out.write(line + \"\\n\")\n    13\t\n    14\t\n    15\tdef quote(value):\n    16\t    text = str(value)\n    17\t    if any(c in text for c in ',\"\\n'):\n    18\t        return '\"' + text.replace('\"', '\"\"') + '\"'\n    19\t    return text\n",
                ),
        )
        .push(
            T::says("Line 11 appends a comma after every field, the last one included. Joining the quoted fields fixes it.")
                .call(
                    "toolu_01Hb4Oy8Sl3Xr6Un9Md2Wc5A",
                    "Edit",
                    r#"{"file_path":"/home/dev/ledger/export/csv_writer.py","old_string":"        line = \"\"\n        for col in COLUMNS:\n            line += quote(row.get(col, \"\")) + \",\"\n        out.write(line + \"\\n\")","new_string":"        out.write(\",\".join(quote(row.get(col, \"\")) for col in COLUMNS) + \"\\n\")"}"#,
                )
                .result("toolu_01Hb4Oy8Sl3Xr6Un9Md2Wc5A", "The file /home/dev/ledger/export/csv_writer.py has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n     6\tdef write_rows(rows, out):\n     7\t    out.write(\",\".join(COLUMNS) + \"\\n\")\n     8\t    for row in rows:\n     9\t        out.write(\",\".join(quote(row.get(col, \"\")) for col in COLUMNS) + \"\\n\")")
                .user("This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:\nAnalysis: the user asked why the nightly CSV export ends every row with a comma, to fix it, and to keep the importer reading old files.\nSummary:\n1. Cause: /home/dev/ledger/export/csv_writer.py write_rows appended \",\" after every field (line 11).\n2. Fix applied: rows are now written as \",\".join(quote(...) for col in COLUMNS).\n3. Pending: check that the importer (/home/dev/ledger/import/csv_reader.py) still reads files written before the fix, with the trailing empty column.")
                .user("Please continue the conversation from where we left it off without asking the user any further questions. Continue with the last task that you were asked to work on."),
        )
        .push(
            T::silent()
                .reasoning("Old files have six fields per row with an empty last one. Check how the reader splits rows.")
                .call("toolu_01Jc5Pz9Tm4Ys7Vo0Ne3Xd6B", "Bash", r#"{"command":"cd /home/dev/ledger && grep -n 'split\\|reader' import/csv_reader.py","description":"Find how the importer splits rows"}"#)
                .result("toolu_01Jc5Pz9Tm4Ys7Vo0Ne3Xd6B", "4:import csv\n12:    reader = csv.DictReader(f)\n13:    for rec in reader:\n14:        rec.pop(None, None)  # old exports: trailing empty column\n"),
        )
        .push(
            T::silent()
                .call("toolu_01Kd6Qa0Un5Zt8Wp1Of4Ye7C", "Bash", r#"{"command":"cd /home/dev/ledger && python -m pytest -q tests/test_export.py tests/test_import.py 2>&1 | tail -n 3","description":"Run the export and import tests"}"#)
                .result("toolu_01Kd6Qa0Un5Zt8Wp1Of4Ye7C", "...........\n11 passed in 0.34s\n"),
        )
        .push(
            T::says("Fixed: `write_rows` (export/csv_writer.py) now joins the fields, so rows no longer end with a comma. The importer drops the trailing empty column of old files (`rec.pop(None, None)`, import/csv_reader.py:14), so both read; all 11 export and import tests pass."),
        )
}
