// CI: seeds 5001..10000 of the Raft simulation (the other half is seeds_a.sim.ts). Tests only.
import { seedSuite } from './seed_suite.js';

seedSuite('raft simulation, seeds 5001-10000', 5001, 5000);
