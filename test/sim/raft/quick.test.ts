// The quick set of the Raft simulation that `npm test` runs: 200 seeds through both phases, so a
// normal test run catches a regression; `npm run test:sim` runs 10,000. Tests only.
import { seedSuite } from './seed_suite.js';

seedSuite('raft simulation, quick set', 20_001, 200);
