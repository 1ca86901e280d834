// Dispatches to the function this image was built for (ENV KRM_FN).
'use strict';
const name = process.env.KRM_FN;
if (!name || !/^[a-z0-9-]+$/.test(name)) {
  process.stderr.write(`KRM_FN is not set to a function name (got ${JSON.stringify(name)})\n`);
  process.exit(2);
}
require(`./${name}.js`);
