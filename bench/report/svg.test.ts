import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cdfChart, escapeXml, histogram, legendCorner, lineChart, linearScale, niceTicks, tickLabel } from './svg.ts';

/**
 * Throws unless `xml` is well formed as far as these charts go: tags nest and close in order,
 * attributes are quoted, and no text or attribute holds a bare `<` or an `&` that starts no entity.
 */
function assertWellFormed(xml: string): void {
  const open: string[] = [];
  const tag = /<(\/?)([a-zA-Z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/y;
  let i = 0;
  while (i < xml.length) {
    const lt = xml.indexOf('<', i);
    const text = xml.slice(i, lt < 0 ? xml.length : lt);
    assert.doesNotMatch(text, /&(?!#\d+;|amp;|lt;|gt;|quot;|apos;)/, `bare & in ${JSON.stringify(text)}`);
    assert.doesNotMatch(text, />/, `bare > in ${JSON.stringify(text)}`);
    if (lt < 0) break;
    tag.lastIndex = lt;
    const m = tag.exec(xml);
    assert.ok(m, `malformed tag at ${xml.slice(lt, lt + 60)}`);
    const [whole, closing, name, attrs, selfClosing] = m;
    for (const [, value] of (attrs ?? '').matchAll(/="([^"]*)"/g)) assert.doesNotMatch(value ?? '', /&(?!#\d+;)/);
    if (closing) assert.equal(open.pop(), name, `</${name ?? ''}> closes nothing open`);
    else if (!selfClosing) open.push(name ?? '');
    i = lt + whole.length;
  }
  assert.deepEqual(open, [], 'unclosed tags');
}

const texts = (svg: string) => [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);

describe('niceTicks', () => {
  it('covers the range with round steps of 1, 2 or 5 times a power of ten', () => {
    assert.deepEqual(niceTicks(0, 1), [0, 0.2, 0.4, 0.6, 0.8, 1]);
    assert.deepEqual(niceTicks(3, 97), [0, 20, 40, 60, 80, 100]);
    assert.deepEqual(niceTicks(500, 5000), [0, 1000, 2000, 3000, 4000, 5000]);
    assert.deepEqual(niceTicks(2, 8), [2, 4, 6, 8]);
  });

  it('prints exact decimals', () => {
    for (const t of niceTicks(0.1, 0.7)) assert.ok(String(t).length <= 4, String(t));
  });

  it('spans something when the data is one value or nothing', () => {
    assert.deepEqual(niceTicks(0, 0), [0, 0.2, 0.4, 0.6, 0.8, 1]);
    assert.ok(niceTicks(5, 5).length > 1);
    assert.deepEqual(niceTicks(Infinity, -Infinity), [0, 1]);
  });
});

describe('linearScale', () => {
  it('maps the domain onto the range, backwards too', () => {
    const y = linearScale([0, 10], [300, 100]);
    assert.equal(y(0), 300);
    assert.equal(y(10), 100);
    assert.equal(y(5), 200);
    assert.equal(linearScale([2, 8], [0, 60])(4), 20);
  });
});

describe('tickLabel', () => {
  it('groups thousands and shows the decimals the step needs', () => {
    assert.equal(tickLabel(5000, [0, 1000]), '5,000');
    assert.equal(tickLabel(0.4, [0, 0.2]), '0.4');
    assert.equal(tickLabel(0.05, [0, 0.05]), '0.05');
    assert.equal(tickLabel(20, [0, 20]), '20');
  });
});

describe('escapeXml', () => {
  it('escapes every character with a meaning in markup', () => {
    assert.equal(escapeXml(`a<b>&"c'`), 'a&#60;b&#62;&#38;&#34;c&#39;');
  });
});

describe('legendCorner', () => {
  const size = { width: 200, height: 40 };

  it('takes the top left corner of the plot when nothing is there', () => {
    assert.deepEqual(legendCorner([[600, 300]], size), { x: 80, y: 52 });
  });

  it('moves to the corner covering the fewest marks', () => {
    const rising = Array.from({ length: 50 }, (_, i) => [72 + i * 11, 344 - i * 6] as const);
    const corner = legendCorner(rising, size);
    // A line from bottom left to top right leaves the other two corners free: top left first.
    assert.deepEqual(corner, { x: 80, y: 52 });
    const falling = rising.map(([x, y]) => [x, 388 - y] as const);
    assert.deepEqual(legendCorner(falling, size), { x: 408, y: 52 });
  });
});

describe('lineChart', () => {
  const svg = lineChart({
    title: 'Convergence <ours> & "raw"',
    x: { label: 'objects' },
    y: { label: 'seconds' },
    series: [
      { label: 'ours', points: [[500, 2], [1000, 4], [5000, 19]] },
      { label: 'raw create', points: [[500, 1.5], [1000, 3], [5000, 14]] },
      { label: 'fit', points: [[500, 2], [5000, 18]], dashed: true },
    ],
  });

  it('is a well-formed SVG document', () => {
    assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    assertWellFormed(svg);
  });

  it('escapes the title and labels', () => {
    assert.ok(texts(svg).includes('Convergence &#60;ours&#62; &#38; &#34;raw&#34;'));
  });

  it('has ticked, labelled axes and a legend entry per series', () => {
    const t = texts(svg);
    for (const label of ['objects', 'seconds', 'ours', 'raw create', 'fit', '0', '5,000', '20']) assert.ok(t.includes(label), `${label} in ${t.join('|')}`);
    assert.equal((svg.match(/<path /g) ?? []).length, 3);
    assert.equal((svg.match(/stroke-dasharray/g) ?? []).length, 2, 'the fit and its legend entry are dashed');
    const strokes = [...svg.matchAll(/<path d="[^"]+" fill="none" stroke="(#\w+)"/g)].map((m) => m[1]);
    assert.deepEqual(strokes, ['#0072b2', '#d55e00', '#d55e00'], 'a fit takes the colour of the series it follows');
    // Markers on measurements only.
    assert.equal((svg.match(/<circle /g) ?? []).length, 6);
  });

  it('places points on the scales: the largest value at the top of the plot, zero at the bottom', () => {
    const ys = [...svg.matchAll(/<circle cx="([\d.]+)" cy="([\d.]+)"/g)].map((m) => Number(m[2]));
    const xs = [...svg.matchAll(/<circle cx="([\d.]+)"/g)].map((m) => Number(m[1]));
    // y ticks run 0..20, so 19 sits just under the top (44) and x = 5000 is the right edge (616).
    assert.ok(Math.abs(Math.min(...ys) - (344 - (19 / 20) * 300)) < 0.01);
    assert.equal(Math.max(...xs), 616);
  });
});

describe('cdfChart', () => {
  const svg = cdfChart({ title: 'latency', x: { label: 'ms' }, series: [{ label: 'ours', values: [3, 1, 2, 4] }] });

  it('rises in steps from the smallest sample to 1', () => {
    assertWellFormed(svg);
    const path = /<path d="([^"]+)"/.exec(svg)?.[1] ?? '';
    // Four samples: a move, then a horizontal hold and a rise per later sample.
    assert.equal(path.split('L').length, 1 + 2 * 3);
    assert.ok(texts(svg).includes('1.0'), 'the y axis ends at 1');
  });
});

describe('histogram', () => {
  it('draws each series as shares of its own samples, side by side', () => {
    const svg = histogram({
      title: 'latency & more',
      x: { label: 'ms' },
      series: [
        { label: 'ours', values: [1, 1, 2, 9] },
        { label: 'raw', values: [1, 2] },
      ],
    });
    assertWellFormed(svg);
    const bars = [...svg.matchAll(/<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" fill="(#\w+)"/g)];
    const heights = (color: string) => bars.filter((b) => b[5] === color).map((b) => Number(b[4]));
    const [ours, raw] = [heights('#0072b2'), heights('#d55e00')];
    assert.equal(ours.length, 3);
    assert.equal(raw.length, 2);
    // Half of each series sits in the first bin: equal bars, though the counts differ.
    assert.ok(Math.abs((ours[0] ?? 0) - (raw[0] ?? 0)) < 0.01);
    assert.ok(Number(bars.find((b) => b[5] === '#d55e00')?.[1]) > Number(bars.find((b) => b[5] === '#0072b2')?.[1]));
  });
});
