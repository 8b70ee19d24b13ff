import { setPublicRangesForLab } from './address.js'
import { type LabAnswer, setLabNames } from './resolve.js'

// The test suite's seam into egress: a resolver map in place of DNS, and address ranges
// (the TEST-NET range of a network namespace the test made) the floor treats as public.
// Nothing in the runtime imports this module; a guest cannot reach host JavaScript.
export function installEgressLab(lab: {
  names: Record<string, LabAnswer>
  publicRanges: string[]
}): () => void {
  setLabNames(new Map(Object.entries(lab.names)))
  setPublicRangesForLab(lab.publicRanges)
  return () => {
    setLabNames(undefined)
    setPublicRangesForLab(undefined)
  }
}
