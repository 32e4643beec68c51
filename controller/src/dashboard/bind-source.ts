/** The dashboard's view of a Controller: its public read methods, bound, and the backend's servers. */
import type { Controller } from '../runtime/controller';
import type { DashboardSource } from './source';

export function bindSource(ctl: Controller, servers: DashboardSource['servers']): DashboardSource {
  return {
    get clock() {
      return ctl.clock;
    },
    events: ctl.events,
    list: () => ctl.list(),
    records: () => ctl.observedRecords(),
    whatIf: (id, ps, workers) => ctl.whatIf(id, ps, workers),
    convergenceData: (id) => ctl.convergenceData(id),
    servers,
  };
}
