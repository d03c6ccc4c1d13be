// CI: seeds 1..5000 of the Raft simulation (the other half is seeds_b.sim.ts). Tests only.
import { seedSuite } from './seed_suite.js';

seedSuite('raft simulation, seeds 1-5000', 1, 5000);
