import { describe } from './api';
import { toast } from './toast';

/**
 * What a page's buttons share: run the request, toast `done` when it worked, show why when it
 * did not, and reload the page's data either way (a failed delete may still have changed it).
 */
export function action(load: () => Promise<unknown>, setError: (message: string) => void) {
  return async (fn: () => Promise<unknown>, done?: string): Promise<void> => {
    try {
      await fn();
      if (done) toast(done);
    } catch (err) {
      setError(describe(err));
    }
    await load();
  };
}
