const { parseAllDocuments } = require('yaml');
function t(label, s){ const m0=process.memoryUsage().rss; const t0=Date.now(); let err=''; try{ const d=parseAllDocuments(s,{merge:true,uniqueKeys:true}); err=(d[0]&&d[0].errors[0]||{}).code||''; }catch(e){err='THROW '+e.message.slice(0,60)} console.log(label, s.length, Date.now()-t0,'ms', ((process.memoryUsage().rss-m0)/1e6).toFixed(0),'MB', err); }
const N=+process.argv[2]||20000;
t('flow [', 'steps: '+'['.repeat(N)+']'.repeat(N));
t('flow {', 'steps: '+'{a: '.repeat(N)+'}'.repeat(N));
t('compact -', '- '.repeat(N)+'x');
let s=''; for(let i=0;i<Math.min(N,3000);i++) s+=' '.repeat(i)+'a:\n'; t('staircase', s);
t('flat flow', 'x: ['+'1,'.repeat(N*5)+'1]');
t('unclosed [', 'steps: '+'['.repeat(N));
