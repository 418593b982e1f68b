//! The texts that generated chat-form sessions are drawn from: missions, system prompts,
//! what an assistant says, what a (simulated) user replies, shell commands and the
//! lines their output is made of, error outputs, and the tools with their parameters.
//!
//! All of it is invented for recap; the shapes follow the runs recap replays
//! (customer-service dialogues, function-calling repairs, classic fenced-command agents).

/// A tool as a generated session declares it: its description and its parameters
/// (`name`, JSON type, description, required).
#[derive(Debug, Clone, Copy)]
pub struct ToolDef {
    pub name: &'static str,
    pub description: &'static str,
    pub params: &'static [(&'static str, &'static str, &'static str, bool)],
}

/// Tools of coding agents (function-calling SWE-agent, OpenHands, Claude-Code-like).
pub const DEV_TOOLS: &[ToolDef] = &[
    ToolDef {
        name: "bash",
        description: "Run a shell command in the repository and return its output.",
        params: &[("command", "string", "The command to run.", true)],
    },
    ToolDef {
        name: "read_file",
        description: "Read a file, optionally a range of lines.",
        params: &[
            ("path", "string", "Absolute path.", true),
            ("start_line", "integer", "First line (1-based).", false),
            ("end_line", "integer", "Last line, inclusive.", false),
        ],
    },
    ToolDef {
        name: "str_replace_editor",
        description: "Replace one exact occurrence of old_str by new_str in a file.",
        params: &[
            ("command", "string", "Always `str_replace`.", true),
            ("path", "string", "Absolute path.", true),
            (
                "old_str",
                "string",
                "Text to replace; must occur once.",
                true,
            ),
            ("new_str", "string", "Replacement text.", true),
        ],
    },
    ToolDef {
        name: "search_code",
        description: "Search the repository for a pattern.",
        params: &[
            ("query", "string", "Regular expression.", true),
            ("path", "string", "Directory to search.", false),
        ],
    },
    ToolDef {
        name: "list_dir",
        description: "List a directory.",
        params: &[("path", "string", "Directory.", true)],
    },
    ToolDef {
        name: "run_tests",
        description: "Run the test suite or one test file.",
        params: &[
            ("path", "string", "Test file or directory.", true),
            ("verbose", "boolean", "Show each test.", false),
        ],
    },
    ToolDef {
        name: "web_search",
        description: "Search the web; returns titles, urls and snippets.",
        params: &[
            ("query", "string", "The query.", true),
            (
                "max_results",
                "integer",
                "At most this many results.",
                false,
            ),
        ],
    },
];

/// Tools of customer-service agents (airline and retail dialogues).
pub const SERVICE_TOOLS: &[ToolDef] = &[
    ToolDef {
        name: "get_user_details",
        description: "Get a customer's profile, payment methods and reservations.",
        params: &[(
            "user_id",
            "string",
            "The user id, such as `sara_doe_496`.",
            true,
        )],
    },
    ToolDef {
        name: "get_reservation_details",
        description: "Get the details of a reservation.",
        params: &[(
            "reservation_id",
            "string",
            "Six characters, such as `ZFA04Y`.",
            true,
        )],
    },
    ToolDef {
        name: "update_reservation_flights",
        description: "Change the flights of a reservation; the fare difference is charged or refunded.",
        params: &[
            ("reservation_id", "string", "The reservation.", true),
            (
                "cabin",
                "string",
                "basic_economy, economy or business.",
                true,
            ),
            (
                "flights",
                "array",
                "Every flight of the new itinerary.",
                true,
            ),
            (
                "payment_id",
                "string",
                "The payment method for the difference.",
                true,
            ),
        ],
    },
    ToolDef {
        name: "cancel_reservation",
        description: "Cancel a whole reservation.",
        params: &[("reservation_id", "string", "The reservation.", true)],
    },
    ToolDef {
        name: "find_order",
        description: "Get the status and items of an order.",
        params: &[("order_id", "string", "Starts with `#W`.", true)],
    },
    ToolDef {
        name: "transfer_to_human_agents",
        description: "Hand the conversation to a human agent with a summary.",
        params: &[("summary", "string", "What the customer needs.", true)],
    },
];

pub const DEV_MISSIONS: &[&str] = &[
    "<uploaded_files>\n/repo\n</uploaded_files>\nI've uploaded a Python repository in /repo. Consider the following issue:\n\nparse_header() raises KeyError on headers without a value\n\nCalling `parse_header(\"X-Empty:\")` should return {\"X-Empty\": \"\"} but raises `KeyError: 'X-Empty'`.\n\nMake the minimal change to non-test files so that the issue is resolved.",
    "Fix the failing test tests/test_dates.py::test_leap_year and explain the cause in one paragraph.",
    "Add a --dry-run flag to the `sync` subcommand: it prints what would be copied and copies nothing.",
    "The CSV export drops rows whose note contains a line break (e.g. \"first\\r\\nsecond\"). Find out why and fix it.",
    "Upgrade the project from pydantic v1 to v2 in src/config/ and keep the public API unchanged.",
    "在仓库里找出所有调用已弃用 API `fetch_all()` 的地方，并替换为 `fetch_page()`。",
];

pub const SERVICE_MISSIONS: &[&str] = &[
    "Hi! I need to move my flight from New York to Seattle on May 20 to the next day, same cabin please.",
    "I want to return the water bottle and the hiking backpack from my last order, refund to my gift card.",
    "Bonjour, je voudrais annuler ma réservation 8JX2WO : mon vol a été retardé de cinq heures.",
    "hey so my package never showed up?? order number is #W7342738",
    "Can you add a checked bag to my trip next week? Also what's my current membership level",
];

pub const RESEARCH_MISSIONS: &[&str] = &[
    "How many moons of Jupiter were announced after 2020? Give the number and cite two sources.",
    "Compare the memory use of three JSON parsers for Rust on a 100 MB file and recommend one.",
    "Summarise what changed in the project's configuration format between 2.x and 3.0.",
];

pub const DEV_SYSTEM_PROMPTS: &[&str] = &[
    "You are a software engineering agent working in /repo. Use the tools to inspect and edit files; run the tests before you finish.",
    "You are an autonomous programmer. Think step by step, make small edits, and call `submit` when the fix is done.",
    "",
];

pub const SERVICE_SYSTEM_PROMPTS: &[&str] = &[
    "# Airline agent policy\n\nAs an airline agent you can help users book, modify or cancel reservations.\n- Before any action that updates the booking database, list the action details and obtain explicit user confirmation (yes) to proceed.\n- Make at most one tool call at a time when talking to the user.\n- Transfer to a human agent only when the request is outside this policy.",
    "You are a retail customer-service agent. Authenticate the user by email or by name and zip code before looking up orders. Never make up order details.",
];

pub const FENCED_SYSTEM_PROMPTS: &[&str] = &[
    "SETTING: You are an autonomous programmer working directly in the command line with a special interface.\n\nCOMMANDS:\nopen <path> [<line_number>] - opens the file at the given path\ngoto <line_number> - moves the window to show <line_number>\nedit <start_line>:<end_line>\n<replacement_text>\nend_of_edit - replaces the given lines\nsubmit - submits your current code\n\nRESPONSE FORMAT:\nYour output should include exactly one discussion and one command field, the command in a ``` block.",
];

/// What an assistant says before or beside its tool calls.
pub const TOOL_PREAMBLES: &[&str] = &[
    "Let me look at the repository structure first.",
    "I'll read the function around the failing line.",
    "Checking the reservation details before changing anything.",
    "Running the tests to confirm the fix.",
    "These lookups are independent, so I'll run them in parallel.",
    "Je vérifie la commande avant de continuer.",
    "The previous call failed because of the path; retrying with the absolute one.",
    "Now I'll make the edit.",
];

/// What an assistant asks or tells the user, with no tool call.
pub const ASSISTANT_REPLIES: &[&str] = &[
    "Could you please tell me your user id?",
    "I found two reservations on May 20. Which one would you like to change: 4WQ150 or H9ZU1C?",
    "The change costs $120 more (fare difference in economy). Shall I proceed? Please answer yes or no.",
    "Is there anything else I can help you with?",
    "Pour confirmer : vous souhaitez annuler la réservation 8JX2WO et être remboursé(e) sur la carte se terminant par 4421 ?",
    "I couldn't find an order with that number. Could you double-check it, or give me the email on the account?",
    "Before I edit the tests: do you want the old behaviour kept behind a flag?",
];

/// What a person or a simulated user replies.
pub const USER_REPLIES: &[&str] = &[
    "Sure, it's mia_li_3668.",
    "The first one, 4WQ150.",
    "yes",
    "No wait, make it business class instead.\nAnd I'd like to pay with the gift card.",
    "Oui, merci.",
    "That's all, thanks!\n###STOP###",
    "I don't remember the order number, can you look it up by my email? it's noah.brown9@example.com",
    "ok 👍",
    "Please don't modify the tests.",
    "Go ahead and run the full suite.",
    "",
];

/// Final answers: the last response of a run that finished.
pub const FINAL_ANSWERS: &[&str] = &[
    "I changed `parse_header` to default a missing value to the empty string and added a regression test. All 48 tests pass.",
    "Your flight is now on May 21 (HAT170, economy). The fare difference of $120 was charged to the card ending in 4421.",
    "Four moons announced since 2020 are confirmed; sources: the observatory's 2023 circular and the minor-planet center listing.",
    "La réservation 8JX2WO est annulée ; le remboursement de 412 € arrivera sous 5 à 7 jours ouvrés.",
    "Done.",
];

/// Reasoning (thinking) texts.
pub const REASONING: &[&str] = &[
    "The user wants to change the date only. Policy: economy can be modified, basic economy cannot. I need the reservation first.",
    "The traceback ends in parse_header at line 42: `name, value = line.split(\":\")` fails when\nthe value part is empty? No, split still gives two parts. The KeyError comes later, from headers[name].\nLet me read the function.",
    "Two independent lookups: user profile and order. Parallel is fine.",
    "Tests failed with a tab in the fixture; the regex uses ` +` instead of `\\s+`.",
    "",
];

/// Discussions of a classic fenced-command agent.
pub const DISCUSSIONS: &[&str] = &[
    "DISCUSSION\nFirst I'll find the parser module.",
    "DISCUSSION\nThe traceback points at line 42; let me open the file there.",
    "DISCUSSION\nLet me reproduce the bug with a small script before changing anything.",
    "DISCUSSION\nThe edit introduced an indentation error. I'll fix lines 42-44.",
    "DISCUSSION\nThe reproduction now prints the expected dict. Submitting.",
];

/// Commands of a classic fenced-command agent (shell and its special commands).
pub const COMMANDS: &[&str] = &[
    "ls -la",
    "find_file \"parser.py\"",
    "open src/parser.py 40",
    "search_dir \"def parse_header\" src",
    "edit 42:44\n        value = parts[1].strip() if len(parts) > 1 else \"\"\n        headers[name] = value\nend_of_edit",
    "python -m pytest tests/test_parser.py -q",
    "create reproduce.py",
    "python reproduce.py",
    "goto 120",
    "scroll_down",
    "submit",
];

/// Lines that outputs are made of: listings, code, test runs, tracebacks, logs.
pub const OUTPUT_LINES: &[&str] = &[
    "total 48",
    "drwxr-xr-x  5 agent agent 4096 Mar  2 10:14 src",
    "-rw-r--r--  1 agent agent 1187 Mar  2 10:14 setup.py",
    "def parse_header(line: str) -> dict:",
    "    return {k.strip(): v.strip() for k, v in pairs}",
    "    raise ValueError(f\"bad header: {line!r}\")",
    "tests/test_parser.py::test_empty_header PASSED",
    "tests/test_parser.py::test_unicode FAILED",
    "E       AssertionError: assert 'café' == 'cafe'",
    "Traceback (most recent call last):",
    "  File \"/repo/src/parser.py\", line 42, in parse_header",
    "KeyError: 'X-Empty'",
    "warning: unused variable: `count`",
    "   Compiling tinyparse v0.3.1 (/repo)",
    "{\"status\": \"ok\", \"count\": 3}",
    "Résumé : 3 fichiers modifiés",
    "日本語のログ行です",
    "    ",
    "",
    "\tindented with a tab",
    "ERROR 2024-05-01T12:00:03Z connection reset by peer",
    "==== 12 passed, 1 failed in 0.84s ====",
    "src/parser.py:42:        name, value = line.split(\":\", 1)",
    "  ✓ handles empty values (3 ms)",
];

/// Outputs of a failed tool call or command.
pub const ERROR_OUTPUTS: &[&str] = &[
    "Error: file not found: /repo/src/parsers.py",
    "Traceback (most recent call last):\n  File \"reproduce.py\", line 3, in <module>\n    print(parse_header(\"X-Empty:\"))\nKeyError: 'X-Empty'",
    "bash: pytset: command not found",
    "Error: old_str `value = parts[1]` did not appear verbatim in /repo/src/parser.py.",
    "Error: reservation not found",
    "Error: the order #W7342738 is still processing and cannot be returned",
    "Tool call timed out after 120 seconds",
    "Invalid JSON in arguments: expected `,` or `}` at line 1 column 38",
    "",
];

/// Footers a classic fenced-command environment appends to every output.
pub const ENV_FOOTERS: &[&str] = &[
    "(Open file: /repo/src/parser.py)\n(Current directory: /repo)\nbash-$",
    "(Open file: n/a)\n(Current directory: /repo)\nbash-$",
];

/// Paths as tool arguments: long string literals, with spaces, unicode and backslashes.
pub const PATHS: &[&str] = &[
    "/repo/src/parser.py",
    "/repo/tests/test_parser.py",
    "/workspace/django/db/models/sql/compiler.py",
    "docs/guide/getting started.md",
    "/tmp/reproduce.py",
    "C:\\Users\\dev\\project\\src\\main.rs",
    "/repo/données/résumé.txt",
    "/repo",
];

/// Queries as tool arguments.
pub const QUERIES: &[&str] = &[
    "parse_header KeyError empty value",
    "jupiter moons announced 2023 circular",
    "SELECT id, email FROM users WHERE created_at >= '2024-01-01'",
    "\"exact phrase\" with quotes",
    "def (parse|split)_header\\(",
    "flush stdout python subprocess",
];

/// Code snippets for edits (with quotes, tabs and line breaks).
pub const SNIPPETS: &[&str] = &[
    "name, value = line.split(\":\", 1)",
    "value = parts[1].strip() if len(parts) > 1 else \"\"\nheaders[name] = value",
    "\tif not line:\n\t\treturn {}",
    "raise ValueError(f\"bad header: {line!r}\")",
    "",
];

/// Shell commands as tool arguments.
pub const SHELL: &[&str] = &[
    "ls -la /repo",
    "cd /repo && python -m pytest tests/test_parser.py -q 2>&1 | tail -n 30",
    "grep -rn \"parse_header\" src/ | head",
    "git diff",
    "python - <<'EOF'\nfrom parser import parse_header\nprint(parse_header(\"X-Empty:\"))\nEOF",
    "pip install -e . >/dev/null && echo ok",
];
