/**
 * Variables that point a program at a socket or a session outside the sandbox (an agent, a bus, a
 * display, a multiplexer, a container engine, an editor's IPC). None is passed in: with the
 * sockets themselves out of reach they would only mislead, and a listed socket (sandbox.sockets)
 * keeps the variables that name it.
 */
export const OUTSIDE_VARS = [
  'SSH_AUTH_SOCK',
  'SSH_AGENT_PID',
  'GPG_AGENT_INFO',
  'DBUS_SESSION_BUS_ADDRESS',
  'DBUS_SYSTEM_BUS_ADDRESS',
  'DISPLAY',
  'WAYLAND_DISPLAY',
  'WAYLAND_SOCKET',
  'XAUTHORITY',
  'XDG_RUNTIME_DIR',
  'XDG_SESSION_ID',
  'TMUX',
  'TMUX_PANE',
  'STY',
  'DOCKER_HOST',
  'CONTAINER_HOST',
  'PULSE_SERVER',
  'PIPEWIRE_REMOTE',
  'SWAYSOCK',
  'I3SOCK',
  'HYPRLAND_INSTANCE_SIGNATURE',
  'GNOME_KEYRING_CONTROL',
  'KITTY_LISTEN_ON',
  'NVIM',
  'NVIM_LISTEN_ADDRESS',
  'VSCODE_IPC_HOOK_CLI',
  'VSCODE_GIT_IPC_HANDLE',
  'NOTIFY_SOCKET',
  'JOURNAL_STREAM',
  'LISTEN_FDS',
  'LISTEN_PID',
];

export function sandboxEnv(
  env: Record<string, string>,
  sockets: readonly string[],
): Record<string, string> {
  const out = { ...env };
  for (const k of OUTSIDE_VARS) {
    const v = out[k];
    if (v !== undefined && !sockets.some((s) => v.includes(s))) delete out[k];
  }
  return out;
}

/** This user's runtime folders (/run/user/<uid>, $XDG_RUNTIME_DIR): hidden inside. */
export function runtimeDirs(env: NodeJS.ProcessEnv = process.env): string[] {
  const uid = process.getuid?.();
  const out = uid === undefined ? [] : [`/run/user/${uid}`];
  const xdg = env.XDG_RUNTIME_DIR;
  if (xdg?.startsWith('/') && !out.includes(xdg)) out.push(xdg);
  return out;
}
