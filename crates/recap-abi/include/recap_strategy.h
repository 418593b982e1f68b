/*
 * recap strategy plugin ABI, version 1.1 — C declarations.
 *
 * Mirrors crates/recap-abi/src/ffi.rs; the wire format (request and response JSON)
 * is documented in crates/recap-abi/README.md, and its section "The contract in
 * detail" gives every field as sent with its default, the built-ins' exact texts, the
 * invariant ids, the limits and the thread rules; the sessions and values a request
 * carries are defined in docs/format.md (section 9 for the chat form).
 *
 * 1.1 changed only the JSON, not the C layout: a plugin built against 1.0 loads and
 * runs unchanged. What 1.1 added:
 *   - `describe` may answer "forms": ["ptc", "chat"], the session forms the plugin
 *     renders. Absent (every 1.0 plugin, and a plugin without `describe`) means
 *     ["ptc"]; recap never sends a session of a form the plugin does not declare.
 *   - chat requests: "form": "chat", turns in the chat shape
 *     ({"number", "assistant": {"content": string|null, "tool_calls": [{"id", "name",
 *     "arguments"}], "reasoning"?}, "observations": [{"role": "tool", "tool_call_id",
 *     "name"?, "content", "is_error"?} | {"role": "user", "content",
 *     "environment"?}], "success"?, "usage"?}), and "max_turns": null when the session
 *     recorded no budget. PTC-Lisp requests have no "form" and are as in 1.0.
 *   - "token_counts" in chat requests when the run has a tokenizer:
 *     {"tokenizer", "system", "mission", "turns": [[n, ...], ...]}, one count per
 *     message of each turn (assistant response first, then each observation), by the
 *     per-message formula 3 + tokens(role) + tokens(content) + sum over tool calls of
 *     (3 + tokens(name) + tokens(arguments)); a prompt counts 3 + the sum of its
 *     messages. session_render requests carry {"turns": [...]} for their new turns.
 *   - messages in responses may have role "tool", "tool_calls" (assistant messages:
 *     [{"id", "name", "arguments"}]), "tool_call_id" (required on tool messages) and
 *     "name" (tool messages); "content" may be null (read as "").
 *
 * A plugin is a shared library exporting two functions:
 *
 *   uint32_t recap_strategy_abi_version(void);                     frozen forever
 *   const RecapStrategyPluginV1 *recap_strategy_plugin_v1(void);   ABI major 1
 *
 * The descriptor must live as long as the process (a static), and must never be
 * written to after it is returned. recap never unloads a plugin.
 *
 * Ownership: the host owns request bytes (borrowed for one call; not NUL-terminated;
 * do not keep the pointer). Every buffer a plugin writes to an `out` parameter is
 * owned by the plugin and is passed back, unchanged, exactly once to the same
 * plugin's `free`. The host sets *out to {NULL, 0, 0} (and session_open's *session to
 * NULL) before every call: a function that returns without writing *out answers no
 * bytes, an invalid response (but for session_open). Write *out on every path.
 *
 * Threads: `render` and `describe` may be called from several threads at once. The
 * calls of one session handle (open, renders, close) are made one after another,
 * never concurrently, but not always from one thread: keep session state in the
 * handle, not in thread-locals. Different handles are used concurrently. `free` is
 * called on the thread that made the call, right after the host read the answer and
 * before that thread's next call, concurrently with other threads' calls.
 *
 * Limits: an answer of more than 256 MiB (268435456 bytes) is refused unread. Each
 * call has 30 s by default (recap --plugin-timeout); an in-process call past it is
 * abandoned and the plugin disabled; with --plugin-isolation process the worker is
 * killed instead, and an abort, a crash or exit() fails only the call it happened in.
 *
 * Never let a C++ exception or a longjmp cross these functions.
 */
#ifndef RECAP_STRATEGY_H
#define RECAP_STRATEGY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RECAP_ABI_MAJOR 1u
#define RECAP_ABI_MINOR 2u

/* The bytes "RECAPSTR" read as a big-endian 64-bit integer. */
#define RECAP_PLUGIN_MAGIC 0x5245434150535452ull

/* Status codes returned by render, describe and the session functions. */
#define RECAP_STATUS_OK 0          /* out holds the response (or nothing, see below) */
#define RECAP_STATUS_ERROR 1       /* out holds {"error": {...}}: the strategy refused */
#define RECAP_STATUS_PANIC 2       /* out holds {"error": {"kind": "panic", ...}} */
#define RECAP_STATUS_BAD_REQUEST 3 /* out holds {"error": {"kind": "bad_request", ...}} */

/* A borrowed UTF-8 string: `len` bytes at `ptr`, not NUL-terminated. */
typedef struct RecapStr {
    const uint8_t *ptr;
    size_t len;
} RecapStr;

/* A plugin-allocated buffer handed to the host. `cap` is for the plugin's own use
 * (a Rust plugin rebuilds its Vec from it); a C plugin may set it to anything.
 * A NULL `ptr` means "no buffer". */
typedef struct RecapBuf {
    uint8_t *ptr;
    size_t len;
    size_t cap;
} RecapBuf;

/* Request JSON in, response JSON out: {"messages": [...]} or {"error": {...}}.
 * Always write *out (also on errors). Required. */
typedef int32_t (*RecapRenderFn)(const uint8_t *request, size_t request_len, RecapBuf *out);

/* Releases a buffer this plugin wrote to an `out` parameter. Required. */
typedef void (*RecapFreeFn)(RecapBuf buf);

/* {"abi": {...}, "host": {...}, "options": {...}} in: at load with "options": {}, then
 * once per strategy instance with a spec's options (values are strings; undeclared
 * keys are sent too: refuse them with kind "invalid_options" and "key"). Out:
 * {"name", "version", "summary", "spec", "options": [...], "invariants": [...],
 *  "forms": ["ptc", "chat"]} ("forms" since 1.1; absent means ["ptc"]); "name" must be
 * the descriptor's; "summary" and "options" are read at load only.
 * Invariant ids: system-first, mission-verbatim, mission-leads-first-user,
 * role-alternation, failed-turns-verbatim, turns-line, deterministic, limits (with
 * "tool_call_limit" and "println_limit"), append-only, tool-pairing (1.1).
 * Optional (NULL: the strategy takes no options, renders PTC-Lisp sessions only, and
 * declares system-first, mission-verbatim, role-alternation and deterministic). */
typedef int32_t (*RecapDescribeFn)(const uint8_t *request, size_t request_len, RecapBuf *out);

/* Optional incremental rendering of one session; set all three or none.
 * session_open: a render request without "turns" in (its "form" is the session's);
 *   on RECAP_STATUS_OK *session is a non-NULL handle and *out may be left empty. It
 *   may carry "pair": N, a hint that another session opened with the same N and the
 *   same request will be sent the same turns (recap's determinism check); ignore it or
 *   hold those turns once — the answers must not depend on it.
 * session_render: {"turns_offset": m, "turns": [...]} in (keep the first m turns the
 *   session holds, append these; in a chat session with token counts also
 *   "token_counts": {"turns": [...]} for the turns appended); out: {"messages": [...],
 *   "messages_kept": n}, the first n messages of the previous response of this
 *   session followed by these. The first session_render of a handle answers
 *   "messages_kept": 0. Since 1.2, when the session_open request's "abi" says minor
 *   2 or later, an item of "messages" may be {"previous": [from, to]}: the messages
 *   from..to (half-open) of this session's previous response, in their place. m never exceeds the turns held; were it to, answer
 *   RECAP_STATUS_BAD_REQUEST with {"error": {"kind": "bad_request", ...}}.
 * session_close: releases the handle. */
typedef int32_t (*RecapSessionOpenFn)(const uint8_t *request, size_t request_len,
                                      void **session, RecapBuf *out);
typedef int32_t (*RecapSessionRenderFn)(void *session, const uint8_t *request,
                                        size_t request_len, RecapBuf *out);
typedef void (*RecapSessionCloseFn)(void *session);

/* Every descriptor of every major starts with these four fields. */
typedef struct RecapDescriptorHeader {
    uint64_t magic;     /* RECAP_PLUGIN_MAGIC */
    size_t size;        /* sizeof the plugin's descriptor; minor versions grow it */
    uint32_t abi_major; /* RECAP_ABI_MAJOR */
    uint32_t abi_minor; /* RECAP_ABI_MINOR */
} RecapDescriptorHeader;

/* The v1 descriptor. Minor versions only append fields; a host reads a field only
 * when `size` covers it (1.1 appended none). On LP64 targets sizeof is 104. */
typedef struct RecapStrategyPluginV1 {
    uint64_t magic;
    size_t size;
    uint32_t abi_major;
    uint32_t abi_minor;
    RecapStr name;    /* [a-z0-9][a-z0-9_-]{0,63}: the name in spec strings */
    RecapStr version; /* the plugin's own version: 1-64 bytes of UTF-8, no control
                         characters; shown in reports, never compared */
    RecapRenderFn render;
    RecapFreeFn free;
    RecapDescribeFn describe;               /* may be NULL */
    RecapSessionOpenFn session_open;        /* may be NULL (with the next two) */
    RecapSessionRenderFn session_render;    /* may be NULL */
    RecapSessionCloseFn session_close;      /* may be NULL */
} RecapStrategyPluginV1;

uint32_t recap_strategy_abi_version(void);
const RecapStrategyPluginV1 *recap_strategy_plugin_v1(void);

#ifdef __cplusplus
}
#endif

#endif /* RECAP_STRATEGY_H */
