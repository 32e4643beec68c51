/** `npm run build:dashboard`: writes the dashboard bundle for a container image. */
import { DASHBOARD_DIST, writeDashboard } from './assets';

const { js, css } = await writeDashboard();
process.stderr.write(
  `dashboard: ${DASHBOARD_DIST} (app.js ${js.length} bytes, app.css ${css.length} bytes)\n`,
);
