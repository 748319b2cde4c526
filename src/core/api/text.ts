// Text from another cluster, bounded before it is stored or shown.

/** `text` cut to at most `max` characters, the last one an ellipsis when anything was dropped. */
export function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
