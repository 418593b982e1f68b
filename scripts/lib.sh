# Shared by the bench scripts that run recap over generated corpora; sourced from the
# repository root.

# Builds recap and recap-gen's gen-corpus in release and sets $recap and $gen to them;
# sets $tmp to a new directory, removed when the script exits.
bench_setup() {
    echo "==> building recap and gen-corpus (release)" >&2
    cargo build --release --quiet --bin recap
    cargo build --release --quiet -p recap-gen --example gen-corpus
    local target
    target="$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
    recap="$target/release/recap"
    gen="$target/release/examples/gen-corpus"
    [[ -x "$recap" && -x "$gen" ]] || { echo "error: built binaries not found under $target/release" >&2; exit 1; }
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
}

# Writes the 100 sessions of recap-gen's generator with seed $1 (1 to 30 turns each) to
# the file $2: the chunks every bench corpus is made of.
gen_chunk() {
    "$gen" --seed "$1" --sessions 100 --turns 1..=30 --out "$2" 2>/dev/null
}
