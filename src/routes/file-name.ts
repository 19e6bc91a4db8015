// The file name a GET URL's reply offers in Content-Disposition (fn:, or the source's last path segment with
// att:). A browser strips folders itself, but what it shows comes from these characters: a bidi override
// (U+202E) makes "gpj.exe" read as "exe.jpg", and "../" suggests a place the name never goes. So the name keeps
// only what names a file: no path separators, no control characters (C0, DEL, C1, line and paragraph
// separators), no bidi controls (U+061C, U+200E/F, U+202A-202E, U+2066-2069), no leading dots.
const DROPPED = /[/\\\p{Cc}\p{Bidi_Control}\p{Zl}\p{Zp}]/gu

/** The name without what could spoof or place it; undefined if nothing is left. */
export function safeFileName (name: string): string | undefined {
  const kept = name.replace(DROPPED, '').replace(/^[.\s]+/, '').trim()
  return kept === '' ? undefined : kept
}
