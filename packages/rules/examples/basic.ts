import { compileRules, getNodeAffinity, getResourceAffinity, parseRulesConfig, transformRules } from '@poise/rules';

const text = [
  'node-affinity: db-home',
  '\tresources vm:101',
  '\tnodes node1,node2',
  '\tstrict 1',
  '',
  'resource-affinity: db-with-app',
  '\tresources vm:101,vm:102',
  '\taffinity positive',
  '',
  'resource-affinity: app-alone',
  '\tresources vm:102',
  '\taffinity negative',
  '',
  'node-affinity: typo',
  '\tresources vm:103',
  '\tnodes node3',
  '\tstrict maybe',
].join('\n');
const nodes = ['node1', 'node2', 'node3'];

// 1. parse: bad lines and values are skipped and returned as warnings
const { config, warnings } = parseRulesConfig(text, 'rules.cfg');
for (const warning of warnings) console.log(warning.message);

// 2. check and transform (in place): infeasible rules are dropped, one message per conflict
for (const message of transformRules(config, nodes)) console.log(message);

// 3. compile, then ask what placement asks
const compiled = compileRules(config, nodes);
const { allowed, pri } = getNodeAffinity(compiled, 'vm:102', nodes); // vm:102 follows vm:101 home
console.log([...allowed], [...pri]);
const status = { 'vm:101': { state: 'started', node: 'node2' } };
console.log(getResourceAffinity(compiled, 'vm:102', status).together);
