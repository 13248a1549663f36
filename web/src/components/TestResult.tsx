import type { TestResult as Result } from '../lib/types';
import { Icon } from './Icon';

/** The answer of a provider test: working (with its latency), or why not. */
export function TestResult({ result }: { result: Result | undefined }) {
  if (!result) return null;
  if (result.ok) {
    return (
      <p class="ok" role="status" tabIndex={-1} data-testid="test-result" data-ok="true">
        <Icon name="check" /> The model answered
        {result.latency_ms != null ? ` in ${result.latency_ms} ms` : ''}.
      </p>
    );
  }
  return (
    <div class="error" role="alert" tabIndex={-1} data-testid="test-result" data-ok="false">
      <strong>
        The test failed{result.reason ? ` (${result.reason.replace(/_/g, ' ')})` : ''}.
      </strong>
      {result.message && <div>{result.message}</div>}
    </div>
  );
}
