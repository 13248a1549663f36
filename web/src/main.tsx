import { render } from 'preact';
import './styles.css';
import { App } from './components/App';

render(<App />, document.getElementById('app')!);
