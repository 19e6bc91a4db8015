import neostandard from 'neostandard'

export default neostandard({
  ts: true,
  ignores: ['node_modules/**', 'load/results/**', 'load/.media/**']
})
