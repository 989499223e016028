// `npm run boxoffice -- --kafka` starts each service in a process of its own with a command line the parent makes:
// every child must accept it. It gave them `--schema`, which their parser refused: each exited at once with
// ERR_PARSE_ARGS_UNKNOWN_OPTION and no service ran. Naive twin: that command line, refused by the same parser.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseMainArgs, serviceArgs } from '../../examples/boxoffice/main-args.ts';
import { serviceNames } from '../../examples/boxoffice/system.ts';

const urls = { emailUrl: 'http://127.0.0.1:1/e', paymentUrl: 'http://127.0.0.1:2/p' };

test("each service's command line in the --kafka mode is one its process accepts", () => {
  for (const name of serviceNames) {
    const values = parseMainArgs(serviceArgs(name, '8080', urls));
    assert.deepEqual(
      { ...values },
      { kafka: false, service: name, port: '8080', 'email-url': urls.emailUrl, 'payment-url': urls.paymentUrl },
    );
  }
});

test('naive twin: the command line that named a schema is refused by the same parser', () => {
  const before = ['--port', '8080', '--schema', 'boxoffice', '--email-url', urls.emailUrl, '--service', 'order'];
  assert.throws(() => parseMainArgs(before), { code: 'ERR_PARSE_ARGS_UNKNOWN_OPTION' });
});
