// Kubernetes metav1.Time: RFC 3339 to the second, as the API server itself writes it.

/** `d` as a metav1.Time (no fraction of a second). */
export function metaTime(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
