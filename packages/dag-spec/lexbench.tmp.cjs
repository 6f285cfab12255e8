const { Lexer, parseAllDocuments } = require('yaml');
function spec(steps){ let s='name: big\nsteps:\n'; for(let i=0;i<steps;i++) s+=`  - name: step${i}\n    command: echo "hello [${i}] {x}" # c\n    depends: [step${i-1}]\n    env:\n      - A: "1"\n      - B: 'two'\n    script: |\n      echo [[[[\n      ls {\n`; return s;}
function time(f, reps){ f(); const t=process.hrtime.bigint(); for(let i=0;i<reps;i++) f(); return Number(process.hrtime.bigint()-t)/1e6/reps; }
for (const n of [1, 10, 100, 1000, 5000]) {
  const s = spec(n);
  const reps = Math.max(3, Math.floor(2000/n));
  const lex = time(()=>{let c=0; for (const tok of new Lexer().lex(s)) c++;}, reps);
  const parse = time(()=>parseAllDocuments(s,{merge:true,uniqueKeys:true}).map(d=>d.toJS()), reps);
  console.log(n, s.length, 'lex ms', lex.toFixed(3), 'parse ms', parse.toFixed(3));
}
for (const N of [1000, 5000, 20000, 50000]) { const s='steps: '+'['.repeat(N)+']'.repeat(N); let t=Date.now(); try{parseAllDocuments(s)}catch(e){console.log(e.message.slice(0,80))} console.log('attack',N,Date.now()-t,'ms'); }
