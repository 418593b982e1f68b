use super::*;

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn fresh_target_gets_the_report_and_nothing_is_left_beside_or_inside() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("out");
    let o = OutputDir::create(&target, false).unwrap();
    o.write("report.json", b"{}").unwrap();
    o.write("report.csv", b"a\n").unwrap();
    o.write("prompts/a.jsonl", b"x\n").unwrap();
    assert!(
        !target.join("report.json").exists(),
        "nothing visible before commit"
    );
    o.commit().unwrap();
    assert_eq!(fs::read(target.join("report.json")).unwrap(), b"{}");
    assert!(target.join("prompts/a.jsonl").exists());
    assert_eq!(names(tmp.path()), ["out"], "nothing beside the target");
    assert_eq!(
        names(&target),
        ["prompts", "report.csv", "report.json"],
        "no staging directory or lock file left inside"
    );
}

#[test]
fn staging_lives_inside_the_target() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("out");
    let o = OutputDir::create(&target, false).unwrap();
    let staged = o.staged("report.json");
    assert!(staged.starts_with(&target), "{}", staged.display());
    assert_eq!(names(tmp.path()), ["out"]);
}

#[test]
fn a_second_writer_is_refused_while_the_first_holds_the_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("out");
    let first = OutputDir::create(&target, false).unwrap();
    let e = OutputDir::create(&target, true).err().unwrap();
    assert!(
        matches!(e, OutputError::Busy { holder: Some(pid), .. } if pid == std::process::id()),
        "{e}"
    );
    assert!(e.to_string().contains("another recap run"), "{e}");
    first.commit().unwrap();
    assert!(OutputDir::create(&target, true).is_ok());
}

#[test]
fn an_abandoned_run_leaves_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let created = tmp.path().join("new");
    drop(OutputDir::create(&created, false).unwrap());
    assert!(
        !created.exists(),
        "a directory created for nothing is removed"
    );
    let existing = tmp.path().join("existing");
    fs::create_dir(&existing).unwrap();
    drop(OutputDir::create(&existing, false).unwrap());
    assert!(existing.is_dir(), "a directory the user made stays");
    assert!(names(&existing).is_empty());
}

#[test]
fn leftovers_of_a_killed_run_are_not_a_report_and_are_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("out");
    let stale = target.join(format!("{STAGING_PREFIX}killed"));
    fs::create_dir_all(stale.join(PROMPTS_DIR)).unwrap();
    fs::write(stale.join("report.json"), "{\"half").unwrap();
    fs::write(target.join(LOCK_FILE), "12345\n").unwrap();
    let o = OutputDir::create(&target, false).unwrap();
    assert_eq!(o.cleaned_up(), std::slice::from_ref(&stale));
    assert!(!stale.exists());
    o.write("report.json", b"{}").unwrap();
    o.commit().unwrap();
    assert_eq!(names(&target), ["report.json"]);
}

#[test]
fn previous_report_is_refused_without_force() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("out");
    fs::create_dir(&target).unwrap();
    fs::write(target.join("report.json"), "old").unwrap();
    let e = OutputDir::create(&target, false).err().unwrap().to_string();
    assert!(
        e.contains("refusing to overwrite") && e.contains("--force"),
        "{e}"
    );
    assert_eq!(
        fs::read_to_string(target.join("report.json")).unwrap(),
        "old"
    );
    assert_eq!(names(&target), ["report.json"], "no lock file left");
}

#[test]
fn force_replaces_recap_files_and_keeps_others() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("out");
    fs::create_dir_all(target.join("prompts")).unwrap();
    fs::write(target.join("report.json"), "old").unwrap();
    fs::write(target.join("tokens_per_call_cl100k_base.svg"), "old").unwrap();
    fs::write(target.join("prompts/x.jsonl"), "old").unwrap();
    for stale in [SESSIONS_CSV, CALLS_CSV, REPORT_HTML] {
        fs::write(target.join(stale), "old").unwrap();
    }
    fs::write(target.join("notes.txt"), "mine").unwrap();
    let o = OutputDir::create(&target, true).unwrap();
    o.write("report.json", b"new").unwrap();
    let mut calls = o.stream(CALLS_CSV).unwrap();
    calls.write_all(b"new\n").unwrap();
    calls.flush().unwrap();
    drop(calls);
    o.commit().unwrap();
    assert_eq!(
        fs::read_to_string(target.join("report.json")).unwrap(),
        "new"
    );
    assert_eq!(fs::read_to_string(target.join(CALLS_CSV)).unwrap(), "new\n");
    assert!(!target.join("tokens_per_call_cl100k_base.svg").exists());
    assert!(!target.join("prompts").exists());
    assert_eq!(
        fs::read_to_string(target.join("notes.txt")).unwrap(),
        "mine"
    );
    assert_eq!(names(&target), [CALLS_CSV, "notes.txt", "report.json"]);
}

#[test]
fn a_file_target_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("f");
    fs::write(&f, "").unwrap();
    assert!(matches!(
        OutputDir::create(&f, true),
        Err(OutputError::NotADirectory(_))
    ));
}

#[test]
fn an_io_error_names_the_path_once() {
    let e = OutputError::Io {
        path: PathBuf::from("/x/report.json"),
        source: io::Error::from(io::ErrorKind::PermissionDenied),
    };
    assert_eq!(e.to_string(), "cannot write /x/report.json");
}

#[test]
fn each_run_of_an_experiment_gets_the_next_directory_and_keeps_the_earlier_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let parent = tmp.path().join("results");
    for expected in ["run-0001", "run-0002"] {
        let o = OutputDir::create_next_run(&parent).unwrap();
        o.write("report.json", expected.as_bytes()).unwrap();
        assert_eq!(o.commit().unwrap(), parent.join(expected));
    }
    // Numbers continue after the highest, whatever else the directory holds.
    fs::create_dir(parent.join("run-0009")).unwrap();
    fs::write(parent.join("notes.txt"), "mine").unwrap();
    let o = OutputDir::create_next_run(&parent).unwrap();
    assert_eq!(o.commit().unwrap(), parent.join("run-0010"));
    assert_eq!(
        fs::read_to_string(parent.join("run-0001/report.json")).unwrap(),
        "run-0001"
    );
    // A run that writes no report leaves no directory.
    drop(OutputDir::create_next_run(&parent).unwrap());
    assert_eq!(
        names(&parent),
        ["notes.txt", "run-0001", "run-0002", "run-0009", "run-0010"]
    );
}
