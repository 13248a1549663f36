/** The one mark a reply stopped by the person carries (on the cut reply, or after the turn when no reply was cut). */
export function StoppedNote() {
  return (
    <p class="stopped-note" data-testid="stopped">
      Stopped
    </p>
  );
}
