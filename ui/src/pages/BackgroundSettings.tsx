import { InlineError } from "../components/InlineError";
import { Spinner } from "../components/Loading";
import { useDesktopSettings, useQuitApp, useSetDesktopSetting, type DesktopChange } from "../desktopQueries";

export function Toggle({
  id,
  title,
  hint,
  checked,
  disabled,
  onChange,
}: {
  id: string;
  title: string;
  hint: string;
  checked: boolean;
  disabled: boolean;
  onChange: (on: boolean) => void;
}) {
  return (
    <label className="toggle-row" htmlFor={id}>
      <input
        id={id}
        type="checkbox"
        role="switch"
        data-testid={id}
        checked={checked}
        disabled={disabled}
        onChange={(e) => onChange(e.target.checked)}
      />
      <span className="toggle-text">
        <span className="toggle-title">{title}</span>
        <span className="muted">{hint}</span>
      </span>
    </label>
  );
}

/** Healer only helps while it runs: whether it stays when the window closes, and starts at login. */
export function BackgroundSettings() {
  const settings = useDesktopSettings();
  const set = useSetDesktopSetting();
  const quit = useQuitApp();
  const change = (c: DesktopChange) => set.mutate(c);
  const data = settings.data;
  return (
    <section className="card settings-section" aria-labelledby="background-title" data-testid="background-settings">
      <h2 className="section-title" id="background-title">Running in the background</h2>
      {settings.isPending && <Spinner label="Loading" />}
      {settings.isError && <InlineError lead="These settings couldn't be loaded." error={settings.error} />}
      {data && (
        <>
          <Toggle
            id="keep-running"
            title="Keep Healer running when the window is closed"
            hint={
              data.tray
                ? "Your workflows stay on schedule. Healer waits in the tray; open it from there or from your apps."
                : "This desktop has no tray, so closing the window quits Healer."
            }
            checked={data.keep_running && data.tray}
            disabled={set.isPending || !data.tray}
            onChange={(on) => change({ setting: "keep_running", on })}
          />
          <Toggle
            id="start-at-login"
            title="Start Healer when you log in"
            hint="It starts in the tray, without opening a window."
            checked={data.start_at_login}
            disabled={set.isPending}
            onChange={(on) => change({ setting: "start_at_login", on })}
          />
        </>
      )}
      {set.isError && <InlineError lead="The setting couldn't be changed." error={set.error} />}
      <div className="action-row">
        <button type="button" className="button" data-testid="quit-app" onClick={() => quit.mutate()} disabled={quit.isPending}>
          Quit Healer
        </button>
        <span className="muted">Scheduled runs stop until you start Healer again.</span>
      </div>
    </section>
  );
}
