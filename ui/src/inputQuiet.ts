// When the person last pressed a key or a pointer button anywhere in the window, so that a
// question appearing under their fingers can tell whether they were busy with something else.

let last = Number.NEGATIVE_INFINITY;

function note() {
  last = performance.now();
}

/** Starts noting input, from now on; the returned function stops. */
export function trackInput(): () => void {
  last = Number.NEGATIVE_INFINITY;
  document.addEventListener("keydown", note, true);
  document.addEventListener("pointerdown", note, true);
  return () => {
    document.removeEventListener("keydown", note, true);
    document.removeEventListener("pointerdown", note, true);
  };
}

/** Milliseconds since the last key or pointer press (Infinity when there was none). */
export function quietFor(): number {
  return performance.now() - last;
}
