fn main() {
    // Listing the app's commands makes Tauri generate an `allow-<command>` permission for each,
    // so capabilities/default.json grants exactly the commands the UI uses and nothing else.
    let manifest = tauri_build::AppManifest::new().commands(&[
        "app_info",
        "list_events",
        "list_notifications",
        "mark_notifications_read",
        "send_test_alert",
        "open_log_folder",
        "list_workflows",
        "get_workflow",
        "validate_workflow",
        "create_workflow",
        "update_workflow",
        "save_script",
        "set_workflow_paused",
        "delete_workflow",
        "run_workflow_now",
        "list_runs",
        "get_run",
        "list_versions",
        "load_examples",
        "list_providers",
        "save_provider",
        "remove_provider",
        "set_provider_key",
        "forget_provider_key",
        "test_provider",
        "detect_ollama",
        "list_tiers",
        "set_tier",
        "clear_tier",
        "get_budgets",
        "set_budgets",
        "usage_today",
        "list_autofixes",
        "get_autofix",
        "get_planner_chat",
        "send_planner_message",
        "list_checkpoints",
        "decide_checkpoint",
        "list_patterns",
        "get_pattern",
        "list_decisions",
        "get_scheduler_pause",
        "resume_scheduler",
    ]);
    if let Err(e) = tauri_build::try_build(tauri_build::Attributes::new().app_manifest(manifest)) {
        // A build script has no caller to return to: say what is wrong and stop the build.
        eprintln!("tauri build step failed: {e:#}");
        std::process::exit(1);
    }
}
