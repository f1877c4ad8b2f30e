// The console's escaping: every interpolated string is text, whatever markup it holds; JSON blocks
// cannot be closed from inside.
import { describe, expect, it } from 'vitest';
import { escapeHtml, html, jsonScript, raw } from './html.ts';

describe('html', () => {
  it('escapes interpolated text, in content and in attributes', () => {
    const hostile = `<script>alert("x")</script>' onmouseover='x' \`&`;
    const page = html`<p title="${hostile}">${hostile}</p>`.value;
    expect(page).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onmouseover=&#39;x&#39; &#96;&amp;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onmouseover=&#39;x&#39; &#96;&amp;</p>',
    );
    expect(page).not.toContain('<script>');
  });

  it('keeps Html as it is, joins lists, drops null, undefined and false', () => {
    const items = ['a<', 'b'].map((item) => html`<li>${item}</li>`);
    expect(html`<ul>${items}${null}${undefined}${false}${0}</ul>`.value).toBe(
      '<ul><li>a&lt;</li><li>b</li>0</ul>',
    );
    expect(html`${raw('<b>x</b>')}`.value).toBe('<b>x</b>');
  });

  it('escapes the characters HTML gives meaning to and nothing else', () => {
    expect(escapeHtml('plain text, 1 < 2 & "q"')).toBe('plain text, 1 &lt; 2 &amp; &quot;q&quot;');
    expect(escapeHtml('ünïcode → ok')).toBe('ünïcode → ok');
  });

  it('writes JSON that no stored string can close or turn into markup', () => {
    const data = { text: '</script><script>alert(1)</script>', separators: '\u2028\u2029', amp: 'a&b' };
    const block = jsonScript('chart-x', data).value;
    expect(block.match(/<\/script>/g)).toHaveLength(1);
    const json = block.slice(block.indexOf('>') + 1, block.lastIndexOf('</script>'));
    expect(JSON.parse(json)).toEqual(data);
    expect(json).not.toMatch(/[<>&\u2028\u2029]/);
  });
});
