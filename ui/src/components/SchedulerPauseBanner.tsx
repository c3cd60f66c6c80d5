import { asSentence } from "../api";
import { useResumeScheduler, useSchedulerPause } from "../memoryQueries";
import { PauseIcon, PlayIcon } from "./icons";
import { InlineError } from "./InlineError";
import { Spinner } from "./Loading";

/**
 * Shown over every page while a safety breaker keeps scheduled runs from starting: why, and
 * the button that lets them go again. Nothing shows while they run as usual.
 */
export function SchedulerPauseBanner() {
  const pause = useSchedulerPause();
  const resume = useResumeScheduler();
  const reason = pause.data;
  if (reason == null) return null;
  return (
    <section className="safety-banner" role="status" aria-labelledby="scheduler-paused-title" data-testid="scheduler-paused">
      <span className="safety-banner-icon" aria-hidden="true">
        <PauseIcon size={18} />
      </span>
      <div className="safety-banner-text">
        <h2 className="safety-banner-title" id="scheduler-paused-title">
          Scheduled runs are paused
        </h2>
        <p className="safety-banner-reason" data-testid="scheduler-paused-reason">
          {asSentence(reason)}
        </p>
        <p className="safety-banner-hint">
          Nothing starts on its schedule until they are resumed; you can still run a workflow by hand.
        </p>
        {resume.isError && <InlineError lead="Scheduled runs couldn't be resumed." error={resume.error} />}
      </div>
      <button
        type="button"
        className="button button-small"
        data-testid="resume-scheduler"
        disabled={resume.isPending}
        onClick={() => resume.mutate()}
      >
        {resume.isPending ? <Spinner /> : <PlayIcon size={15} />}
        Resume scheduled runs
      </button>
    </section>
  );
}
