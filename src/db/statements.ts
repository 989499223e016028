/**
 * A query text cut into its statements the way PostgreSQL's lexer sees them: at each semicolon that is not inside a
 * string ('…' with '' doubled, E'…' with backslash escapes, continued across a newline as E'a'\n'b'), a quoted
 * identifier ("…"), a dollar-quoted body ($$…$$, $tag$…$tag$ of any length), a line comment (-- … up to a \n or \r) or
 * a block comment (/* … *\/, nested). Only the simple query protocol (a text with no parameters) runs several
 * statements in one query; `INSERT …; COMMIT` sent that way would end the transaction it is sent in halfway, so the
 * handler's view of a transaction looks inside (transaction-client.ts).
 * Words are read as tokens, as the server reads them: `E'` opens an escape string only as a word of its own (`xE'…'` is
 * a name then a plain string), and a `$` right after a name belongs to the name (`a$b`) but after a number or a
 * parameter opens a dollar-quoted body (`1$q$…$q$`).
 * `backslashEscapes`: read every string as an escape string, as the server does with `standard_conforming_strings`
 * off (a session or role setting the text alone does not show).
 * Comments become a space, each statement is trimmed, and empty ones (`;;`, a trailing `;`) are left out: what is
 * left starts with the statement's first word.
 */
export function statementsOf(text: string, options: { backslashEscapes?: boolean } = {}): string[] {
  const backslashEscapes = options.backslashEscapes === true;
  const statements: string[] = [];
  let current = '';
  /** Where the text not yet copied to `current` begins. */
  let start = 0;
  let i = 0;
  const cut = (end: number, resume: number, replacement: string) => {
    current += text.slice(start, end) + replacement;
    start = resume;
  };
  const n = text.length;
  /** Past the string whose opening quote is at `from`. */
  const string = (from: number, escapes: boolean): number => {
    let at = from + 1;
    for (;;) {
      while (at < n) {
        if (escapes && text[at] === '\\') at += 2;
        else if (text[at] === "'" && text[at + 1] === "'") at += 2;
        else if (text[at] === "'") break;
        else at++;
      }
      if (at >= n) return n;
      at++;
      // 'a' <newline> 'b' is one string: an escape string's continuation still reads backslashes as escapes
      continuation.lastIndex = at;
      if (!escapes || !continuation.test(text)) return at;
      at = continuation.lastIndex;
    }
  };
  while (i < n) {
    const c = text[i]!;
    if (c === ';') {
      cut(i, i + 1, '');
      statements.push(current);
      current = '';
      i++;
    } else if (c === '-' && text[i + 1] === '-') {
      lineEnd.lastIndex = i + 2;
      lineEnd.test(text);
      const resume = lineEnd.lastIndex;
      cut(i, resume, ' ');
      i = resume;
    } else if (c === '/' && text[i + 1] === '*') {
      const from = i;
      let depth = 1;
      i += 2;
      while (i < n && depth > 0) {
        if (text[i] === '/' && text[i + 1] === '*') {
          depth++;
          i += 2;
        } else if (text[i] === '*' && text[i + 1] === '/') {
          depth--;
          i += 2;
        } else i++;
      }
      cut(from, i, ' ');
    } else if (c === "'") {
      i = string(i, backslashEscapes);
    } else if (c === '"') {
      const end = text.indexOf('"', i + 1);
      i = end === -1 ? n : end + 1; // "" inside an identifier: two quoted parts side by side, the same cut
    } else if (identifierStart.test(c)) {
      word.lastIndex = i;
      word.test(text);
      const end = word.lastIndex;
      // E'…': an escape string, when the E is a word of its own
      if (end === i + 1 && (c === 'E' || c === 'e') && text[end] === "'") i = string(end, true);
      else i = end;
    } else if (c >= '0' && c <= '9') {
      i++;
      while (i < n && /[0-9.]/.test(text[i]!)) i++;
    } else if (c === '$') {
      parameter.lastIndex = i;
      dollarTag.lastIndex = i;
      if (parameter.test(text)) i = parameter.lastIndex;
      else if (dollarTag.test(text)) {
        const tag = text.slice(i, dollarTag.lastIndex);
        const end = text.indexOf(tag, dollarTag.lastIndex);
        i = end === -1 ? n : end + tag.length;
      } else i++;
    } else i++;
  }
  cut(n, n, '');
  statements.push(current);
  return statements.map((statement) => statement.trim()).filter((statement) => statement.length > 0);
}

const identifierStart = /[A-Za-z_\u0080-\uffff]/;
const word = /[A-Za-z0-9_$\u0080-\uffff]*/y;
const parameter = /\$[0-9]+/y;
const dollarTag = /\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/y;
/** A line comment ends at a \n or a \r. */
const lineEnd = /[^\n\r]*(?:[\n\r]|$)/y;
/**
 * Whitespace holding a newline (comments allowed after it), then the quote that continues a string. One character
 * a turn: `(?:\s+)*` would try every split of a long run of spaces not followed by a quote (exponential).
 */
const continuation = /[ \t\f\v]*[\n\r](?:[ \t\n\r\f\v]|--[^\n\r]*[\n\r])*'/y;
