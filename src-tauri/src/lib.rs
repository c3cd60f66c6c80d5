//! Healer's desktop shell: a Tauri app that manages the engine, exposes one-line commands over
//! it, and forwards its events to the webview. No engine logic lives here.

mod asking;
mod bridge;
mod cluster_commands;
mod commands;
mod deps_commands;
mod desktop;
mod desktop_commands;
mod heal_commands;
mod model_commands;
mod project_commands;
mod review_commands;
mod state;
mod tray;
mod trim;
mod webkit;
mod window;

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use healer::{logging, Engine, ErrorPayload, Paths};
use tauri::{Manager, RunEvent};
use tauri_specta::{collect_commands, collect_events};

pub use bridge::{EventsMissed, HealerEvent, RunOutput, SessionStepEvent, ThreadTextEvent};
use state::AppState;

/// The typed IPC surface: commands and events, from which `ui/src/bindings.ts` is generated.
pub fn specta_builder() -> tauri_specta::Builder<tauri::Wry> {
    tauri_specta::Builder::<tauri::Wry>::new()
        .commands(collect_commands![
            commands::app_info,
            commands::list_events,
            commands::list_notifications,
            commands::mark_notifications_read,
            commands::send_test_alert,
            commands::open_log_folder,
            commands::list_workflows,
            commands::get_workflow,
            commands::validate_workflow,
            commands::preview_schedule,
            commands::create_workflow,
            commands::update_workflow,
            commands::save_script,
            commands::check_script,
            commands::restore_version,
            commands::dismiss_notification,
            commands::export_full_log,
            commands::setup_skipped,
            commands::skip_setup,
            commands::set_workflow_paused,
            commands::delete_workflow,
            commands::run_workflow_now,
            commands::list_runs,
            commands::get_run,
            commands::list_versions,
            commands::load_examples,
            model_commands::list_providers,
            model_commands::save_provider,
            model_commands::remove_provider,
            model_commands::set_provider_key,
            model_commands::forget_provider_key,
            model_commands::keep_status,
            model_commands::choose_secrets_file,
            model_commands::list_workflow_secrets,
            model_commands::set_workflow_secret,
            model_commands::remove_workflow_secret,
            model_commands::test_provider,
            model_commands::detect_ollama,
            model_commands::detect_llama_cpp,
            model_commands::list_tiers,
            model_commands::set_tier,
            model_commands::clear_tier,
            model_commands::get_budgets,
            model_commands::set_budgets,
            model_commands::usage_today,
            model_commands::get_steering_model,
            model_commands::set_steering_model,
            model_commands::get_steering_settings,
            model_commands::set_steering_settings,
            heal_commands::list_autofixes,
            heal_commands::get_autofix,
            heal_commands::get_planner_chat,
            heal_commands::send_planner_message,
            heal_commands::list_checkpoints,
            heal_commands::decide_checkpoint,
            heal_commands::list_patterns,
            heal_commands::get_pattern,
            heal_commands::list_decisions,
            heal_commands::get_scheduler_pause,
            heal_commands::resume_scheduler,
            heal_commands::retry_autofix,
            desktop_commands::get_desktop_settings,
            desktop_commands::set_keep_running,
            desktop_commands::set_start_at_login,
            desktop_commands::remember_view,
            desktop_commands::restored_view,
            desktop_commands::quit_app,
            deps_commands::get_dependencies,
            deps_commands::reinstall_dependencies,
            deps_commands::propose_packages,
            deps_commands::list_package_fixes,
            project_commands::check_project_folder,
            project_commands::init_project_folder,
            project_commands::validate_project,
            project_commands::add_project,
            project_commands::update_project,
            project_commands::remove_project,
            project_commands::list_projects,
            project_commands::get_project,
            project_commands::get_project_task,
            project_commands::add_project_task,
            project_commands::edit_project_task,
            project_commands::move_project_task,
            project_commands::set_project_task_status,
            project_commands::run_project_task,
            project_commands::stop_session,
            project_commands::say_to_session,
            project_commands::list_past_sessions,
            review_commands::review_session,
            review_commands::review_task,
            review_commands::get_editor_command,
            review_commands::set_editor_command,
            review_commands::open_worktree,
            review_commands::export_session_trajectory,
            review_commands::list_own_past_sessions,
            cluster_commands::cluster_status,
            cluster_commands::test_cluster,
            cluster_commands::connect_cluster,
            cluster_commands::disconnect_cluster,
            cluster_commands::get_runs_on,
            cluster_commands::set_runs_on,
            cluster_commands::worker_gateway,
            cluster_commands::open_gateway_to_workers,
            cluster_commands::make_worker_token,
            cluster_commands::forget_worker_token,
            cluster_commands::stop_run,
            cluster_commands::export_cluster_key,
            project_commands::get_session,
            project_commands::get_healer_config,
            project_commands::set_healer_config,
            project_commands::restore_snapshot,
            project_commands::list_live_sessions,
            project_commands::list_approval_rules,
            project_commands::accept_task,
            project_commands::resolve_conflict,
            project_commands::discard_task_work,
            project_commands::open_pull_request,
            project_commands::add_review_comment,
            project_commands::list_review_comments,
            project_commands::delete_review_comment,
            project_commands::send_review_comments,
            project_commands::set_project_token,
            project_commands::remove_approval_rule,
        ])
        .events(collect_events![
            HealerEvent,
            EventsMissed,
            RunOutput,
            ThreadTextEvent,
            SessionStepEvent
        ])
        // Ids and counts stay far below 2^53.
        .dangerously_cast_bigints_to_number()
        // Our types serialise and deserialise alike; one TS type each is easier to read.
        .disable_serde_phases()
}

/// Write the TypeScript bindings to `path`.
pub fn export_bindings(path: &std::path::Path) -> Result<(), String> {
    specta_builder()
        .export(specta_typescript::Typescript::default(), path)
        .map_err(|e| format!("cannot export bindings to {}: {e}", path.display()))
}

/// Settings an e2e test needs: `HEALER_TEST_HOOKS=1` lets a second launch with
/// `--tray-menu ID` choose a tray menu item, since no tray can be clicked under Xvfb.
const TEST_HOOKS: &str = "HEALER_TEST_HOOKS";

pub fn run() -> ExitCode {
    // First, while this is the only thread: provider keys out of the environment, the initial
    // environment block wiped, the process undumpable (see `healer::secrets`).
    let _sealed = healer::secrets::seal_process();
    let hidden = std::env::args().any(|a| a == desktop::HIDDEN_ARG);
    let knobs = webkit::knobs();
    webkit::before_toolkit(&knobs);
    if let Err(problem) = check_display() {
        eprintln!("Healer: {problem}");
        return ExitCode::from(1);
    }
    webkit::before_webviews(&knobs);
    let paths = match Paths::from_env() {
        Ok(paths) => paths,
        Err(e) => {
            eprintln!("Healer: {e}");
            return ExitCode::from(1);
        }
    };
    let _log = logging::init(
        "info",
        paths.ensure().is_ok().then(|| paths.log_dir()).as_deref(),
    );
    let test_hooks = std::env::var_os(TEST_HOOKS).is_some_and(|v| v == "1");

    let builder = specta_builder();
    let app = tauri::Builder::default()
        // First, so a second launch hands over to this window before anything else starts.
        .plugin(tauri_plugin_single_instance::init(
            move |app, args, _cwd| match tray_hook(&args).filter(|_| test_hooks) {
                Some(id) => tray::choose(app, id),
                None => window::open(app),
            },
        ))
        .plugin(tauri_plugin_window_state::Builder::default().build())
        .plugin(tauri_plugin_notification::init())
        .plugin(tauri_plugin_opener::init())
        .plugin(tauri_plugin_autostart::init(
            tauri_plugin_autostart::MacosLauncher::LaunchAgent,
            Some(vec![desktop::HIDDEN_ARG]),
        ))
        .manage(window::ViewMemory::default())
        .plugin(tauri_plugin_dialog::init())
        .invoke_handler(builder.invoke_handler())
        .setup(move |app| {
            builder.mount_events(app);
            let handle = app.handle().clone();
            asking::register(&handle);
            let started =
                tauri::async_runtime::block_on(Engine::start(paths.clone(), "desktop app"));
            let (engine, tasks) = match started {
                Ok(engine) => {
                    let engine = Arc::new(engine);
                    match engine.glance() {
                        Ok(glance) => tray::create(&handle, &glance),
                        Err(e) => tracing::warn!("no tray icon: Healer's state is unreadable: {e}"),
                    }
                    let tasks = vec![
                        tauri::async_runtime::spawn(bridge::forward(
                            handle.clone(),
                            engine.subscribe(),
                            engine.subscribe_output(),
                            engine.subscribe_thread_text(),
                            engine.subscribe_session_steps(),
                        )),
                        tauri::async_runtime::spawn(tray::follow(
                            handle.clone(),
                            engine.subscribe(),
                        )),
                    ];
                    (Ok(engine), tasks)
                }
                Err(e) => {
                    // The window opens and shows this message; the process exits 1 when closed.
                    eprintln!("Healer: {e}");
                    tracing::error!("engine did not start: {e}");
                    (Err(ErrorPayload::from(e)), Vec::new())
                }
            };
            let failed = engine.is_err();
            app.manage(AppState::new(paths.clone(), engine, tasks));
            // Started at login: in the tray only, unless there is no tray to come back from
            // or something to explain.
            if !hidden || failed || app.tray_by_id(tray::ID).is_none() {
                window::open(&handle);
            }
            close_on_stop_signal(handle);
            Ok(())
        })
        .build(tauri::generate_context!());
    let app = match app {
        Ok(app) => app,
        Err(e) => {
            eprintln!("Healer: the window could not be created: {e}");
            return ExitCode::from(1);
        }
    };

    let failed_to_start = Arc::new(AtomicBool::new(false));
    let failed = failed_to_start.clone();
    let code = app.run_return(move |app, event| match event {
        // The last window closed (not Quit, not a signal): stay in the tray if wanted.
        RunEvent::ExitRequested {
            code: None, api, ..
        } => {
            if let Some(state) = app.try_state::<AppState>() {
                if state.engine().is_ok_and(|e| desktop::staying(app, e)) {
                    api.prevent_exit();
                }
            }
        }
        RunEvent::ExitRequested { code: Some(_), .. } => {
            if let Some(state) = app.try_state::<AppState>() {
                state.set_quitting();
            }
        }
        RunEvent::WindowEvent {
            label,
            event: tauri::WindowEvent::Destroyed,
            ..
        } if label == window::MAIN => desktop::window_closed(app),
        RunEvent::Exit => {
            if let Some(state) = app.try_state::<AppState>() {
                failed.store(state.startup_error().is_some(), Ordering::SeqCst);
                tauri::async_runtime::block_on(state.shutdown());
            }
        }
        _ => {}
    });
    if code != 0 || failed_to_start.load(Ordering::SeqCst) {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// `--tray-menu ID` among a second launch's arguments.
fn tray_hook(args: &[String]) -> Option<&str> {
    let at = args.iter().position(|a| a == "--tray-menu")?;
    args.get(at + 1).map(String::as_str)
}

/// SIGTERM or Ctrl-C closes the app through its normal exit path, so the engine shuts down
/// cleanly (its tasks stopped, `engine_stopped` recorded) instead of dying mid-write.
fn close_on_stop_signal(app: tauri::AppHandle) {
    tauri::async_runtime::spawn(async move {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            let Ok(mut term) = signal(SignalKind::terminate()) else {
                tracing::warn!("cannot listen for SIGTERM");
                return;
            };
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        }
        #[cfg(not(unix))]
        if tokio::signal::ctrl_c().await.is_err() {
            return;
        }
        tracing::info!("stop signal received; closing");
        app.exit(0);
    });
}

/// A desktop app needs a display; say so plainly instead of a toolkit panic.
#[cfg(target_os = "linux")]
fn check_display() -> Result<(), String> {
    let has_display = ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()));
    if !has_display {
        return Err(
            "no display: neither DISPLAY nor WAYLAND_DISPLAY is set. Start Healer from \
                    a desktop session, or run `healer daemon` on a machine without a display"
                .to_string(),
        );
    }
    gtk::init().map_err(|e| {
        format!(
            "cannot open the display {:?}: {e}. Check that the desktop session is running, or \
             run `healer daemon` instead",
            std::env::var("DISPLAY")
                .or_else(|_| std::env::var("WAYLAND_DISPLAY"))
                .unwrap_or_default()
        )
    })
}

#[cfg(not(target_os = "linux"))]
fn check_display() -> Result<(), String> {
    Ok(())
}
