import { render } from 'preact';
import './styles.css';
import { App } from './components/App';
import { keepFocus } from './lib/focus';

const root = document.getElementById('app')!;
keepFocus(root);
render(<App />, root);
