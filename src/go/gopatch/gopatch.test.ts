import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { applyOps, GoPatchError, parsePointer } from './index.ts';

describe('parsePointer', () => {
  it('parses every token kind and prints it back', () => {
    for (const p of ['', '/a', '/a?/b/c', '/0', '/-1:prev', '/-', '/name=x?/y', '/k=v:after', '/a~1b~7c~0', '/0:before']) {
      assert.equal(parsePointer(p).toString(), p);
    }
    assert.deepEqual(parsePointer('/a?/b').tokens, [{ kind: 'root' }, { kind: 'key', key: 'a', optional: true }, { kind: 'key', key: 'b', optional: true }]);
    assert.deepEqual(parsePointer('/+1').tokens[1], { kind: 'index', index: 1n, modifiers: [] });
  });

  it('rejects what go-patch rejects', () => {
    assert.throws(() => parsePointer('a'), { name: 'GoPatchError', message: "Expected to start with '/'" });
    assert.throws(() => parsePointer('/a:prev'), { message: 'Expected not to find any modifiers with key token' });
    assert.throws(() => parsePointer('/-:next'), { message: 'Expected not to find any modifiers with after last index token' });
    assert.throws(() => parsePointer('/0:x'), /but found 'x'/);
  });
});

describe('applyOps', () => {
  const doc = { a: { b: 1 }, list: [{ name: 'x', v: 1 }, { name: 'y' }] };

  it('replaces, creates optional paths, appends and inserts', () => {
    assert.deepEqual(applyOps(doc, [{ type: 'replace', path: '/a/b', value: 2 }]), { a: { b: 2 }, list: doc.list });
    assert.deepEqual(applyOps({}, [{ type: 'replace', path: '/x?/y/-', value: 1 }]), { x: { y: [1] } });
    assert.deepEqual(applyOps({ l: [1, 2] }, [{ type: 'replace', path: '/l/0:after', value: 9 }]), { l: [1, 9, 2] });
    assert.deepEqual(applyOps({ l: [1, 2] }, [{ type: 'replace', path: '/l/-1', value: 9 }]), { l: [1, 9] });
    assert.deepEqual(applyOps(doc, [{ type: 'replace', path: '/list/name=z?/v', value: 3 }]), {
      ...doc,
      list: [...doc.list, { name: 'z', v: 3 }],
    });
    assert.equal(applyOps(doc, [{ type: 'replace', path: '', value: 'all' }]), 'all');
  });

  it('removes, optionally', () => {
    assert.deepEqual(applyOps(doc, [{ type: 'remove', path: '/list/name=x' }]), { a: doc.a, list: [{ name: 'y' }] });
    assert.deepEqual(applyOps(doc, [{ type: 'remove', path: '/nope?/x' }]), doc);
  });

  it("fails with go-patch's messages", () => {
    assert.throws(() => applyOps(doc, [{ type: 'replace', path: '/x', value: 1 }]), {
      name: 'GoPatchError',
      message: "Expected to find a map key 'x' for path '/x' (found map keys: 'a', 'list')",
    });
    assert.throws(() => applyOps(doc, [{ type: 'remove', path: '/list/5' }]), {
      message: "Expected to find array index '5' but found array of length '2' for path '/list/5'",
    });
    assert.throws(() => applyOps(doc, [{ type: 'replace', path: '/a/0', value: 1 }]), {
      message: "Expected to find an array at path '/a/0' but found 'map[interface {}]interface {}'",
    });
    assert.throws(() => applyOps(doc, [{ type: 'remove', path: '' }]), { message: 'Cannot remove entire document' });
    assert.throws(() => applyOps(doc, [{ type: 'move', path: '/a' } as never]), (e: unknown) =>
      e instanceof GoPatchError && e.message === "Unknown operation [0] with type 'move' within\n{\n  \"Type\": \"move\",\n  \"Path\": \"/a\"\n}");
    assert.throws(() => applyOps(doc, [{ type: 'replace', path: 'a', value: 1 }]), {
      message: /^Replace operation \[0\]: Invalid path: Expected to start with '\/' within\n/,
    });
  });

  it('never modifies its input', () => {
    const value = fc.jsonValue({ maxDepth: 2 });
    const path = fc.array(fc.constantFrom('a', 'b?', '0', '-1', '-', 'name=a?', 'x'), { maxLength: 3 }).map((ts) => ts.map((t) => '/' + t).join(''));
    fc.assert(
      fc.property(value, path, value, fc.boolean(), (d, p, v, rm) => {
        const before = JSON.stringify(d);
        try {
          applyOps(d, [rm ? { type: 'remove', path: p } : { type: 'replace', path: p, value: v }]);
        } catch (e) {
          if (!(e instanceof GoPatchError)) throw e;
        }
        return JSON.stringify(d) === before;
      }),
    );
  });
});
