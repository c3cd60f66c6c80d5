//! What WebKitGTK lets a small app turn off to stay light (and one thing of our own: giving
//! memory back while the window is closed). Each knob was measured with `make
//! figures` (docs/memory.md says what each saved); the ones that helped and broke nothing are
//! on by default. `HEALER_WEBKIT_TUNING` picks another set for measuring: `none`, or a comma
//! list of knob names (`cache-model,arenas`).

/// One thing turned off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Knob {
    /// The document-viewer cache model: no memory cache of pages and resources.
    CacheModel,
    /// No spell checker loaded.
    SpellCheck,
    /// No WebGL (and so no GPU process for it).
    WebGl,
    /// Never composite with the GPU (measured only: no gain beside `NoDmabuf`).
    Acceleration,
    /// No back/forward page cache (the app navigates by hash; it never needs one).
    PageCache,
    /// Skia paints with the CPU instead of the GPU.
    CpuRendering,
    /// No DMA-BUF renderer: frames reach the window without GPU buffers, and neither process
    /// loads the GL stack for them (on a machine without a GPU, Mesa's llvmpipe: ~50 MB with
    /// the window open). The path many WebKitGTK apps take where DMA-BUF misbehaves.
    NoDmabuf,
    /// The DMA-BUF renderer hands frames over in shared memory, not GPU buffers.
    Shm,
    /// One painting thread instead of one per core.
    PaintThreads,
    /// JavaScript's heap sized as on a 1 GB machine: collected sooner, kept smaller.
    SmallHeap,
    /// No accelerated compositing at all (measured only: no gain beside `NoDmabuf`).
    NoCompositing,
    /// JavaScript without the JIT: the page is forms and lists, and JavaScriptCore's
    /// interpreter keeps up (the window stories take as long either way); no memory for
    /// compiled code (~10 MB with the window open).
    NoJit,
    /// Two malloc arenas per process instead of eight per core.
    Arenas,
    /// The network process frees caches early, at a 64 MB memory limit.
    Pressure,
    /// With the window closed, give back the heap and code pages only the window used
    /// (`trim.rs`).
    Trim,
}

const ALL: [(&str, Knob); 15] = [
    ("cache-model", Knob::CacheModel),
    ("spell-check", Knob::SpellCheck),
    ("webgl", Knob::WebGl),
    ("acceleration", Knob::Acceleration),
    ("page-cache", Knob::PageCache),
    ("cpu-rendering", Knob::CpuRendering),
    ("no-dmabuf", Knob::NoDmabuf),
    ("shm", Knob::Shm),
    ("paint-threads", Knob::PaintThreads),
    ("small-heap", Knob::SmallHeap),
    ("no-compositing", Knob::NoCompositing),
    ("no-jit", Knob::NoJit),
    ("arenas", Knob::Arenas),
    ("pressure", Knob::Pressure),
    ("trim", Knob::Trim),
];

/// What is on unless `HEALER_WEBKIT_TUNING` says otherwise.
const DEFAULT: &[Knob] = &[Knob::CpuRendering, Knob::NoDmabuf, Knob::NoJit, Knob::Trim];

/// The knobs in effect for this process.
pub fn knobs() -> Vec<Knob> {
    match std::env::var("HEALER_WEBKIT_TUNING") {
        Ok(list) => parse(&list),
        Err(_) => DEFAULT.to_vec(),
    }
}

fn parse(list: &str) -> Vec<Knob> {
    list.split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty() && *name != "none")
        .filter_map(|name| {
            let knob = ALL.iter().find(|(n, _)| *n == name).map(|(_, k)| *k);
            if knob.is_none() {
                tracing::warn!("HEALER_WEBKIT_TUNING: no knob named {name:?}");
            }
            knob
        })
        .collect()
}

/// What must happen before the toolkit starts: environment the web processes inherit, and
/// this process's own allocator.
#[cfg(target_os = "linux")]
pub fn before_toolkit(knobs: &[Knob]) {
    let mut env: Vec<(&str, &str)> = Vec::new();
    for knob in knobs {
        match knob {
            Knob::CpuRendering => env.push(("WEBKIT_SKIA_ENABLE_CPU_RENDERING", "1")),
            Knob::NoDmabuf => env.push(("WEBKIT_DISABLE_DMABUF_RENDERER", "1")),
            Knob::Shm => env.push(("WEBKIT_DMABUF_RENDERER_FORCE_SHM", "1")),
            Knob::PaintThreads => env.push(("WEBKIT_SKIA_CPU_PAINTING_THREADS", "1")),
            Knob::SmallHeap => env.push(("JSC_forceRAMSize", "1073741824")),
            Knob::NoCompositing => env.push(("WEBKIT_DISABLE_COMPOSITING_MODE", "1")),
            Knob::NoJit => env.push(("JSC_useJIT", "0")),
            Knob::Arenas => {
                env.push(("MALLOC_ARENA_MAX", "2"));
                // Ours started already; glibc reads the variable only at its start.
                // SAFETY: mallopt only changes a tunable of the allocator.
                #[cfg(target_env = "gnu")]
                unsafe {
                    libc::mallopt(libc::M_ARENA_MAX, 2)
                };
            }
            _ => {}
        }
    }
    for (name, value) in env {
        // Still one thread: nothing else reads the environment while it changes.
        if std::env::var_os(name).is_none() {
            std::env::set_var(name, value);
        }
    }
}

#[cfg(not(target_os = "linux"))]
pub fn before_toolkit(_knobs: &[Knob]) {}

/// What must happen once the toolkit runs but before the first webview starts WebKit's
/// network process.
#[cfg(target_os = "linux")]
pub fn before_webviews(knobs: &[Knob]) {
    if knobs.contains(&Knob::Pressure) {
        let mut settings = webkit2gtk::MemoryPressureSettings::new();
        settings.set_memory_limit(64);
        webkit2gtk::WebsiteDataManager::set_memory_pressure_settings(&mut settings);
    }
}

#[cfg(not(target_os = "linux"))]
pub fn before_webviews(_knobs: &[Knob]) {}

/// Apply the knobs that belong to a webview and its context.
#[cfg(target_os = "linux")]
pub fn tune(window: &tauri::WebviewWindow) {
    use webkit2gtk::{
        CacheModel, HardwareAccelerationPolicy, SettingsExt, WebContextExt, WebViewExt,
    };
    let knobs = knobs();
    let done = window.with_webview(move |platform| {
        let view = platform.inner();
        if let Some(context) = view.context() {
            if knobs.contains(&Knob::CacheModel) {
                context.set_cache_model(CacheModel::DocumentViewer);
            }
            if knobs.contains(&Knob::SpellCheck) {
                context.set_spell_checking_enabled(false);
            }
        }
        if let Some(settings) = WebViewExt::settings(&view) {
            if knobs.contains(&Knob::WebGl) {
                settings.set_enable_webgl(false);
            }
            if knobs.contains(&Knob::Acceleration) {
                settings.set_hardware_acceleration_policy(HardwareAccelerationPolicy::Never);
            }
            if knobs.contains(&Knob::PageCache) {
                settings.set_enable_page_cache(false);
            }
        }
    });
    if let Err(e) = done {
        tracing::warn!("the webview could not be tuned: {e}");
    }
}

#[cfg(not(target_os = "linux"))]
pub fn tune(_window: &tauri::WebviewWindow) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_names_knobs_and_none_means_none() {
        assert_eq!(parse("none"), Vec::<Knob>::new());
        assert_eq!(parse(""), Vec::<Knob>::new());
        assert_eq!(
            parse("cache-model, arenas,unknown"),
            vec![Knob::CacheModel, Knob::Arenas]
        );
    }
}
