import { createLogger, createPool, migrate } from '@dagu-mcp/runtime';
import { DagCatalog } from '../src/dags/dag.catalog';
import { DagRepository } from '../src/dags/dag.repository';
import { DAG_MIGRATIONS } from '../src/db/migrations';
import { seedDags } from './dag-seed';
async function main() {
  const schema = `bench_dag_keep`;
  const pool = createPool({ url: 'postgres://postgres@127.0.0.1:5432/test', schema, max: 16, logger: createLogger({ name: 'x', level: 'silent' }) });
  await migrate(pool, schema, DAG_MIGRATIONS);
  await seedDags(new DagCatalog(new DagRepository(pool)), 10000);
  await pool.query('ANALYZE dags');
  await pool.end();
}
void main();
