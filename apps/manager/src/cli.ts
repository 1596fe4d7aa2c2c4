// The daemon is not implemented yet (see README.md); fail loudly instead of pretending to run.
console.error('poise-manager: not implemented yet; run the HA core on the simulator with poise-sim');
process.exitCode = 2;
