/** MIME types by file extension, for uploads and artifacts. */
const EXT_MIME: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  svg: 'image/svg+xml',
  pdf: 'application/pdf',
  txt: 'text/plain',
  log: 'text/plain',
  md: 'text/markdown',
  csv: 'text/csv',
  html: 'text/html',
  htm: 'text/html',
  json: 'application/json',
  xml: 'application/xml',
  zip: 'application/zip',
  gz: 'application/gzip',
  tar: 'application/x-tar',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  mp4: 'video/mp4',
  webm: 'video/webm',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  ts: 'text/plain',
  js: 'text/plain',
  py: 'text/plain',
  sh: 'text/plain',
  yml: 'text/plain',
  yaml: 'text/plain',
};

/** The type a name suggests; unknown extensions are octet-stream. */
export function mimeOf(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? name;
  const dot = base.lastIndexOf('.');
  return (
    (dot > 0 ? EXT_MIME[base.slice(dot + 1).toLowerCase()] : undefined) ??
    'application/octet-stream'
  );
}

/**
 * Types safe to serve as themselves from our origin; anything else (HTML, SVG, scripts) goes out
 * as octet-stream, so a file an agent or a user stored can never run in the Web UI's origin.
 */
export const SERVE_AS_IS = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'application/pdf',
  'text/plain',
]);

export function servedType(mime: string): string {
  if (!SERVE_AS_IS.has(mime)) return 'application/octet-stream';
  return mime === 'text/plain' ? 'text/plain; charset=utf-8' : mime;
}
