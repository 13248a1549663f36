import { Component, h, type FunctionComponent } from 'preact';

/**
 * A component that renders again only when one of its props changes identity (a shallow compare,
 * like React's memo without preact/compat): a streamed frame then re-renders the message that
 * changed, not the whole transcript.
 */
export function pure<P extends object>(fn: FunctionComponent<P>): FunctionComponent<P> {
  class Pure extends Component<P> {
    shouldComponentUpdate(next: P): boolean {
      const a = this.props as Record<string, unknown>;
      const b = next as Record<string, unknown>;
      for (const k in b) if (a[k] !== b[k]) return true;
      for (const k in a) if (!(k in b)) return true;
      return false;
    }
    render(props: P) {
      return h(fn, props);
    }
  }
  return Pure as unknown as FunctionComponent<P>;
}
