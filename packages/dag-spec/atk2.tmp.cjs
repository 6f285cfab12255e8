const { parseAllDocuments } = require('yaml');
function t(label, s){ const t0=Date.now(); const d=parseAllDocuments(s,{merge:true,uniqueKeys:process.env.UK==="1"}); const t1=Date.now(); d[0].toJS({mapAsMap:true}); console.log(label, s.length, t1-t0,'ms parse', Date.now()-t1, 'ms toJS', d[0].errors.length); }
for (const N of [10000, 50000, 100000]) {
t('flat flow '+N, 'x: ['+'1,'.repeat(N)+'1]');
t('block seq '+N, 'x:\n'+'  - 1\n'.repeat(N));
t('block map '+N, Array.from({length:N},(_, i)=>`k${i}: ${i}`).join('\n'));
t('flow map '+N, 'x: {'+Array.from({length:N},(_, i)=>`k${i}: ${i}`).join(', ')+'}');
}
