/**
 * A query text cut into its statements the way PostgreSQL's lexer sees them: at each semicolon that is not inside a
 * string ('…' with '' doubled, E'…' with backslash escapes), a quoted identifier ("…"), a dollar-quoted body
 * ($$…$$, $tag$…$tag$), a line comment (-- …) or a block comment (/* … *\/, nested). Only the simple query protocol
 * (a text with no parameters) runs several statements in one query; `INSERT …; COMMIT` sent that way would end the
 * transaction it is sent in halfway, so the handler's view of a transaction looks inside (transaction-client.ts).
 * Comments become a space, each statement is trimmed, and empty ones (`;;`, a trailing `;`) are left out: what is
 * left starts with the statement's first word.
 */
export function statementsOf(text: string): string[] {
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
  const identifierChar = (c: string | undefined) => c !== undefined && /[A-Za-z0-9_$\u0080-\uffff]/.test(c);
  while (i < n) {
    const c = text[i]!;
    if (c === ';') {
      cut(i, i + 1, '');
      statements.push(current);
      current = '';
      i++;
    } else if (c === '-' && text[i + 1] === '-') {
      const end = text.indexOf('\n', i + 2);
      const resume = end === -1 ? n : end + 1;
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
      // E'…' (escape string): a backslash escapes the next character; otherwise only '' is a quote inside
      const escapes = (text[i - 1] === 'E' || text[i - 1] === 'e') && !identifierChar(text[i - 2]);
      i++;
      while (i < n) {
        if (escapes && text[i] === '\\') i += 2;
        else if (text[i] === "'" && text[i + 1] === "'") i += 2;
        else if (text[i] === "'") break;
        else i++;
      }
      i++;
    } else if (c === '"') {
      const end = text.indexOf('"', i + 1);
      i = end === -1 ? n : end + 1; // "" inside an identifier: two quoted parts side by side, the same cut
    } else if (c === '$' && !identifierChar(text[i - 1])) {
      const tag = /^\$([A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/.exec(text.slice(i, i + 64));
      if (tag === null) {
        i++; // $1: a parameter
        continue;
      }
      const end = text.indexOf(tag[0], i + tag[0].length);
      i = end === -1 ? n : end + tag[0].length;
    } else i++;
  }
  cut(n, n, '');
  statements.push(current);
  return statements.map((statement) => statement.trim()).filter((statement) => statement.length > 0);
}
