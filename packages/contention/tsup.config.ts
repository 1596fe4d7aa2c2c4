import { poiseTsup } from '../../tsup.config.base';

export default poiseTsup();
