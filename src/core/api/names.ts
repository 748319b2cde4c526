// What the API server takes as a name or namespace in a request path.

/**
 * Whether a name or namespace can be a segment of a request path: not empty, '.' or '..' (which
 * would make the path name the collection or the namespace instead), nor holding '/' or '%',
 * which the API server refuses with a 400.
 */
export function isPathSegment(value: string): boolean {
  return value !== '' && value !== '.' && value !== '..' && !/[/%]/.test(value);
}

/**
 * Whether a request path can name the object: a template can make a copy's name empty or a dot
 * segment (or its namespace a dot segment), which no object can have, so none is there to look up.
 */
export function addressable(o: { readonly metadata: { readonly name?: string; readonly namespace?: string } }): boolean {
  const { name = '', namespace } = o.metadata;
  return isPathSegment(name) && (!namespace || isPathSegment(namespace));
}
