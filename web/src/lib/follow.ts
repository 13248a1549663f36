import type { RefObject } from 'preact';
import { useCallback, useEffect, useRef } from 'preact/hooks';

/** Keys that scroll a box up. */
const UP_KEYS = new Set(['ArrowUp', 'PageUp', 'Home']);

/** Within this many px of the bottom, a reader moving down is taken to be back at the bottom. */
const NEAR = 80;

/**
 * Keeps a scroll box at its bottom while the reader is there, as content is added (`follow`,
 * called after each drawing); a reader who scrolled up is left where they are, and one who comes
 * back down is followed again. Their intent is taken before the scroll it causes: a drawing that
 * lands between a wheel turn, touch or key and its first scroll event must not pull them back.
 * The wheel and touch listeners are passive, so scrolling never waits for the page's script.
 */
export function useFollow(box: RefObject<HTMLElement | null>, initially: boolean) {
  const stick = useRef(initially);
  const lastTop = useRef(0);
  const touching = useRef(false);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const wheel = (e: WheelEvent) => {
      if (e.deltaY < 0) stick.current = false;
    };
    const touchStart = () => {
      touching.current = true;
      stick.current = false;
    };
    const touchEnd = () => {
      touching.current = false;
      stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < NEAR;
    };
    const passive = { passive: true };
    el.addEventListener('wheel', wheel, passive);
    el.addEventListener('touchstart', touchStart, passive);
    el.addEventListener('touchend', touchEnd, passive);
    el.addEventListener('touchcancel', touchEnd, passive);
    return () => {
      el.removeEventListener('wheel', wheel);
      el.removeEventListener('touchstart', touchStart);
      el.removeEventListener('touchend', touchEnd);
      el.removeEventListener('touchcancel', touchEnd);
    };
  }, [box]);

  const follow = useCallback(() => {
    const el = box.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [box]);

  const onKeyDown = useCallback((e: KeyboardEvent) => {
    if (UP_KEYS.has(e.key)) stick.current = false;
  }, []);

  const onScroll = useCallback((e: Event) => {
    const el = e.currentTarget as HTMLElement;
    const below = el.scrollHeight - el.scrollTop - el.clientHeight;
    const up = el.scrollTop < lastTop.current;
    lastTop.current = el.scrollTop;
    if (touching.current) return;
    // At the very bottom it follows; moving up it stops; moving down near the bottom it follows
    // again. (A clamp after the content shrank leaves it at the bottom.)
    stick.current = below < 2 || (!up && below < NEAR);
  }, []);

  /** Stops following (the page scrolled to a message on purpose). */
  const release = useCallback(() => {
    stick.current = false;
  }, []);

  return { follow, onKeyDown, onScroll, release };
}
