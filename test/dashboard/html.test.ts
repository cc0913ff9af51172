import { expect } from 'chai';
import { escapeHtml, href, html, SafeHtml } from '../../src/dashboard/html.ts';

describe('dashboard HTML templates', () => {
  it('escapes the five characters that can end text or an attribute', () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&amp;</a>`)).to.equal('&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;');
  });

  it('escapes every value put in a template, in text and in attributes', () => {
    const name = '"><script>alert(1)</script>';
    const out = html`<td title="${name}">${name}</td>`.text;
    expect(out).to.equal('<td title="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;">&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;</td>');
    expect(out).not.to.include('<script');
  });

  it('keeps HTML made by templates as it is, in lists too, and writes nothing for false, null and undefined', () => {
    const rows = ['a<b', 'c'].map((v) => html`<li>${v}</li>`);
    expect(html`<ul>${rows}</ul>`.text).to.equal('<ul><li>a&lt;b</li><li>c</li></ul>');
    expect(html`[${false}${null}${undefined}${0}${12n}]`.text).to.equal('[012]');
    expect(html`${new SafeHtml('<b>ok</b>')}`.text).to.equal('<b>ok</b>');
  });

  it('builds links with each query value URL-encoded, then escaped by the template', () => {
    const link = href('/dashboard/requests', { id: 'req_1&x="y"', key: undefined, empty: '' });
    expect(link).to.equal('/dashboard/requests?id=req_1%26x%3D%22y%22');
    expect(html`<a href="${href('/d', { a: '1', b: '2' })}">`.text).to.equal('<a href="/d?a=1&amp;b=2">');
  });
});
