/**
 * How a training container's output reaches the sidecar without the user changing the command:
 * the container runs `/bin/sh -c TEE_SCRIPT optimus-train <command…> <args…>`. The script copies
 * stdout and stderr into the shared log file (and still to the container's own output, so
 * `kubectl logs` is unchanged), forwards SIGTERM/SIGINT to the program (the checkpoint signal), exits
 * with the program's status, and — only when the program ended on its own — creates the done
 * marker that tells the sidecar to drain and exit (a classic sidecar has no other way to know).
 *
 * The copy rotates within `OPTIMUS_LOG_MAX_BYTES` (default 64 MiB; `$log` → `$log.1`, ADR 0038)
 * through `awk`; without one it is a plain, unbounded `tee -a`.
 *
 * Needs a POSIX `sh`, `mkfifo`, `tee` and `mkdir` in the image (`awk` for the rotation) (every Debian/Ubuntu/Alpine based
 * Python image has them; distroless ones do not — see docs/training-contract.md). The FIFO lives
 * in the log directory (an emptyDir), so a read-only root filesystem is fine; without a writable
 * log directory the program simply runs untouched (`exec`).
 */
import type { V1Container } from '@kubernetes/client-node';

/** `$0` of the wrapped command (what `ps` shows); also how a wrapped container is recognised. */
export const TEE_ARGV0 = 'optimus-train' as const;

export const TEE_SCRIPT = [
  'log="${OPTIMUS_LOG_PATH:?}"; dir="$(dirname "$log")"; fifo="$dir/.optimus-tee-$$"',
  // Without a writable log directory (the webhook was down, a read-only root filesystem) the
  // program runs as it would without Optimus: training never depends on the telemetry.
  'if ! { mkdir -p "$dir" && rm -f "$fifo" && mkfifo "$fifo"; } 2>/dev/null; then',
  '  echo "optimus: cannot write $dir; running without copying the output to $log" >&2; exec "$@"',
  'fi',
  // The copy rotates (ADR 0038): past OPTIMUS_LOG_MAX_BYTES (default 64 MiB) the log is renamed
  // to "$log.1" and a new one begun, so log + log.1 stay within twice that in the 256 Mi emptyDir;
  // the sidecar drains the renamed file before following the new one. awk does it (mawk needs
  // -W interactive to pass lines on as they come); an image without a working awk gets plain tee.
  'max="${OPTIMUS_LOG_MAX_BYTES:-67108864}"; case "$max" in ""|*[!0-9]*) max=67108864;; esac',
  'case "$(awk -W version 2>&1 </dev/null)" in *mawk*) aw="-W interactive";; *) aw="";; esac',
  ': >> "$log"',
  'if [ "$max" -gt 0 ] && echo | awk $aw \'{ print; fflush() }\' >/dev/null 2>&1; then',
  '  LC_ALL=C awk $aw -v f="$log" -v max="$max" -v size="$(wc -c < "$log")" \'{',
  '    print; fflush(); print >> f; fflush(f); size += length($0) + 1',
  '    if (size >= max) { close(f); system("mv -f -- \\"$OPTIMUS_LOG_PATH\\" \\"$OPTIMUS_LOG_PATH.1\\""); size = 0 }',
  '  }\' < "$fifo" & tee_pid=$!',
  'else',
  '  tee -a "$log" < "$fifo" & tee_pid=$!',
  'fi',
  '"$@" > "$fifo" 2>&1 & pid=$!',
  'stopping=0',
  'trap \'stopping=1; kill -TERM "$pid" 2>/dev/null\' TERM',
  'trap \'stopping=1; kill -INT "$pid" 2>/dev/null\' INT',
  // `wait` returns early when a trapped signal arrives: wait again until the program is gone.
  'while :; do wait "$pid"; rc=$?; kill -0 "$pid" 2>/dev/null || break; done',
  'wait "$tee_pid"; rm -f "$fifo"',
  '[ "$stopping" = 1 ] || touch "${OPTIMUS_DONE_FILE:-$log.done}"',
  'exit "$rc"',
].join('\n');

/** True when `c` already runs behind the tee (idempotence for the webhook's reinvocation). */
export const isTeeWrapped = (c: Pick<V1Container, 'command'>): boolean =>
  c.command?.[0] === '/bin/sh' && c.command[1] === '-c' && c.command[3] === TEE_ARGV0;

/**
 * The container with its command behind the tee. Needs an explicit `command` (the image's
 * entrypoint is not known here): returns null without one.
 */
export function wrapWithTee<C extends Pick<V1Container, 'command' | 'args'>>(c: C): C | null {
  if (isTeeWrapped(c)) return c;
  if (!c.command || c.command.length === 0) return null;
  return { ...c, command: ['/bin/sh', '-c', TEE_SCRIPT, TEE_ARGV0], args: [...c.command, ...(c.args ?? [])] };
}
