const { parseAllDocuments } = require('yaml');
const uk = process.env.UK==='1';
function t(label, s){ parseAllDocuments('a: [1]'); const t0=process.hrtime.bigint(); const d=parseAllDocuments(s,{merge:true,uniqueKeys:uk}); console.log(label, s.length, (Number(process.hrtime.bigint()-t0)/1e6).toFixed(1),'ms'); }
for (const N of [1000, 2000, 4000, 8000, 16000]) t('flat flow '+N, 'x: ['+'1,'.repeat(N)+'1]');
for (const N of [1000, 2000, 4000, 8000, 16000]) t('block map '+N, Array.from({length:N},(_, i)=>`k${i}: ${i}`).join('\n'));
