/** A go-patch failure; the message is go-patch v0.2.0's text for the same failure. */
export class GoPatchError extends Error {
  override name = 'GoPatchError';
}
