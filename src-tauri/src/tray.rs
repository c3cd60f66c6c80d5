//! The tray icon: Healer's state at a glance (healthy, healing, or how many things need the
//! person: icon and tooltip, and the first line of the menu, since Linux trays show no
//! tooltip), and a menu to open Healer, go to what needs the person, pause or resume every
//! schedule, and quit.

use std::time::Duration;

use healer::engine::{Glance, Mood, Waiting};
use healer::events::{Event, EventRecord};
use tauri::image::Image;
use tauri::menu::{IsMenuItem, Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::{MouseButton, MouseButtonState, TrayIconBuilder, TrayIconEvent};
use tauri::{AppHandle, Manager, Wry};
use tokio::sync::broadcast::{self, error::RecvError};

use crate::state::AppState;

pub const ID: &str = "healer";

/// Menu item ids; `open:<hash>` opens the window at that screen.
const OPEN: &str = "open";
const PAUSE: &str = "pause";
const RESUME: &str = "resume";
const QUIT: &str = "quit";
const OPEN_AT: &str = "open:";

/// At most this many things that need the person get their own menu item.
const WAITING_SHOWN: usize = 8;

/// Events come in bursts (a run: started, attempt, finished); one refresh per burst.
const SETTLE: Duration = Duration::from_millis(300);

/// Whether a tray can be shown here: the tray library loads it at run time, and panics when
/// it is missing, so look first.
#[cfg(target_os = "linux")]
pub fn available() -> bool {
    ["libayatana-appindicator3.so.1", "libappindicator3.so.1"]
        .iter()
        // SAFETY: these libraries run no code of their own when loaded.
        .any(|name| unsafe { libloading::Library::new(name) }.is_ok())
}

#[cfg(not(target_os = "linux"))]
pub fn available() -> bool {
    true
}

/// Make the tray icon; without a tray library, say why and go on without one.
pub fn create(app: &AppHandle, glance: &Glance) {
    if !available() {
        tracing::warn!(
            "no tray: libayatana-appindicator3 is not installed, so closing the window quits \
             Healer (apt-get install libayatana-appindicator3-1)"
        );
        return;
    }
    let built = menu(app, glance).and_then(|menu| {
        TrayIconBuilder::with_id(ID)
            .icon(icon(glance.mood()))
            .tooltip(tooltip(glance))
            .menu(&menu)
            .show_menu_on_left_click(false)
            .on_menu_event(|app, event| choose(app, event.id().as_ref()))
            .on_tray_icon_event(|tray, event| {
                if let TrayIconEvent::Click {
                    button: MouseButton::Left,
                    button_state: MouseButtonState::Up,
                    ..
                } = event
                {
                    crate::window::open(tray.app_handle());
                }
            })
            .build(app)
    });
    if let Err(e) = built {
        tracing::warn!("no tray icon: {e}");
    }
}

/// Do what a menu item says (also the test hook's way in, with the same ids).
pub fn choose(app: &AppHandle, id: &str) {
    let state = app.state::<AppState>();
    let act = |what: &str, done: healer::Result<()>| {
        if let Err(e) = done {
            tracing::error!("{what} from the tray failed: {e}");
        }
    };
    match id {
        OPEN => crate::window::open(app),
        QUIT => app.exit(0),
        PAUSE | RESUME => {
            if let Ok(engine) = state.engine() {
                if id == PAUSE {
                    act("pausing all schedules", engine.pause_scheduler());
                } else {
                    act("resuming schedules", engine.resume_scheduler());
                }
            }
        }
        "close-window" => crate::window::close(app),
        other => match other.strip_prefix(OPEN_AT) {
            Some(hash) => crate::window::open_at(app, hash),
            None => tracing::warn!("no tray menu item {other:?}"),
        },
    }
}

/// Keep the icon, tooltip and menu in step with the engine.
pub async fn follow(app: AppHandle, mut events: broadcast::Receiver<EventRecord>) {
    loop {
        match events.recv().await {
            Ok(record) if !changes_glance(&record.event) => continue,
            Ok(_) | Err(RecvError::Lagged(_)) => {}
            Err(RecvError::Closed) => break,
        }
        tokio::time::sleep(SETTLE).await;
        // The burst is in the store; what is queued adds nothing to one fresh look.
        while let Ok(_) | Err(broadcast::error::TryRecvError::Lagged(_)) = events.try_recv() {}
        refresh(&app);
    }
}

fn refresh(app: &AppHandle) {
    let Some(tray) = app.tray_by_id(ID) else {
        return;
    };
    let state = app.state::<AppState>();
    let glance = match state.engine().map(|engine| engine.glance()) {
        Ok(Ok(glance)) => glance,
        Ok(Err(e)) => {
            tracing::warn!("the tray cannot read Healer's state: {e}");
            return;
        }
        Err(_) => return,
    };
    let updated = tray
        .set_icon(Some(icon(glance.mood())))
        .and_then(|()| tray.set_tooltip(Some(tooltip(&glance))))
        .and_then(|()| menu(app, &glance))
        .and_then(|menu| tray.set_menu(Some(menu)));
    if let Err(e) = updated {
        tracing::warn!("the tray icon could not be updated: {e}");
    }
}

fn changes_glance(event: &Event) -> bool {
    matches!(
        event,
        Event::WorkflowCreated { .. }
            | Event::WorkflowChanged { .. }
            | Event::WorkflowDeleted { .. }
            | Event::RunFinished { .. }
            | Event::MaintenanceStarted { .. }
            | Event::MaintenanceFinished { .. }
            | Event::CheckpointCreated { .. }
            | Event::CheckpointDecided { .. }
            | Event::BreakerTripped { .. }
            | Event::SchedulerPaused { .. }
    )
}

fn icon(mood: Mood) -> Image<'static> {
    match mood {
        Mood::Healthy => tauri::include_image!("../icons/tray/healthy.png"),
        Mood::Healing => tauri::include_image!("../icons/tray/healing.png"),
        Mood::NeedsYou => tauri::include_image!("../icons/tray/needs-you.png"),
    }
}

fn tooltip(glance: &Glance) -> String {
    format!("Healer: {}", glance.sentence())
}

/// The menu items that open what waits for the person: `(hash, label)`.
fn places(glance: &Glance) -> Vec<(String, String)> {
    let mut asks = Vec::new();
    let mut workflows = Vec::new();
    for waiting in &glance.waiting {
        match waiting {
            Waiting::Checkpoint { title, .. } => asks.push(title.as_str()),
            Waiting::Workflow { workflow_id, title } => workflows.push((*workflow_id, title)),
        }
    }
    let mut places = Vec::new();
    // The questions share one page, so they share one item.
    match asks.as_slice() {
        [] => {}
        [one] => places.push(("#/checkpoints".to_string(), format!("Healer asks: {one}"))),
        many => places.push((
            "#/checkpoints".to_string(),
            format!("{} decisions wait for you", many.len()),
        )),
    }
    for (id, title) in workflows.into_iter().take(WAITING_SHOWN) {
        places.push((
            format!("#/workflows/{id}"),
            format!("\u{201c}{title}\u{201d} needs you"),
        ));
    }
    places
}

fn menu(app: &AppHandle, glance: &Glance) -> tauri::Result<Menu<Wry>> {
    let mut items: Vec<Box<dyn IsMenuItem<Wry>>> = Vec::new();
    items.push(Box::new(MenuItem::with_id(
        app,
        "status",
        glance.sentence(),
        false,
        None::<&str>,
    )?));
    items.push(Box::new(MenuItem::with_id(
        app,
        OPEN,
        "Open Healer",
        true,
        None::<&str>,
    )?));
    let places = places(glance);
    if !places.is_empty() {
        items.push(Box::new(PredefinedMenuItem::separator(app)?));
        for (hash, label) in places {
            items.push(Box::new(MenuItem::with_id(
                app,
                format!("{OPEN_AT}{hash}"),
                label,
                true,
                None::<&str>,
            )?));
        }
    }
    items.push(Box::new(PredefinedMenuItem::separator(app)?));
    let (id, label) = match glance.paused {
        Some(_) => (RESUME, "Resume schedules"),
        None => (PAUSE, "Pause all schedules"),
    };
    items.push(Box::new(MenuItem::with_id(
        app,
        id,
        label,
        true,
        None::<&str>,
    )?));
    items.push(Box::new(PredefinedMenuItem::separator(app)?));
    items.push(Box::new(MenuItem::with_id(
        app,
        QUIT,
        "Quit Healer",
        true,
        None::<&str>,
    )?));
    let refs: Vec<&dyn IsMenuItem<Wry>> = items.iter().map(|i| i.as_ref()).collect();
    Menu::with_items(app, &refs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting_for(asks: usize, workflows: i64) -> Glance {
        let mut waiting: Vec<Waiting> = (0..asks)
            .map(|i| Waiting::Checkpoint {
                checkpoint_id: i as i64,
                title: "A run keeps failing (\u{201c}Rates\u{201d})".to_string(),
            })
            .collect();
        waiting.extend((1..=workflows).map(|id| Waiting::Workflow {
            workflow_id: id,
            title: format!("Report {id}"),
        }));
        Glance {
            healing: vec![],
            waiting,
            paused: None,
        }
    }

    #[test]
    fn each_thing_that_waits_opens_its_page_and_questions_share_one_item() {
        assert!(places(&waiting_for(0, 0)).is_empty());
        assert_eq!(
            places(&waiting_for(1, 1)),
            [
                (
                    "#/checkpoints".to_string(),
                    "Healer asks: A run keeps failing (\u{201c}Rates\u{201d})".to_string()
                ),
                (
                    "#/workflows/1".to_string(),
                    "\u{201c}Report 1\u{201d} needs you".to_string()
                ),
            ]
        );
        let many = places(&waiting_for(3, 20));
        assert_eq!(many[0].1, "3 decisions wait for you");
        assert_eq!(many.len(), 1 + WAITING_SHOWN, "the menu stays short");
    }
}
